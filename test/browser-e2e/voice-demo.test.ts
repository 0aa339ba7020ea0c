import t from 'tap'
import { toolSkip } from '../helpers/tool-required.js'
import { HEARD, REPLY, skipReason, startE2e } from './e2e-harness.js'

const skip = toolSkip(skipReason()) || undefined
if (skip !== undefined) {
  t.plan(0, skip)
} else {
  const e2e = await startE2e()
  t.teardown(() => e2e.close())

  t.test('the user speaks into the microphone: the words reach the backend and the reply is played', async (t) => {
    const page = await e2e.openDemo()
    // The level meter moves while the WAV's phrase plays (1 to 4.4 s into the file).
    await page.waitForFunction(
      () => parseFloat((globalThis as any).document.querySelector('[data-testid=mic-level] > div').style.width) > 5,
      undefined,
      { timeout: 15_000 },
    )
    const message = await e2e.waitForRequest((r) => r.json?.type === 'message' && r.json.text === HEARD)
    t.ok(message.signatureValid, 'signed webhook')
    const conversationId = await page.evaluate(() => globalThis.voxgateDemo.conversationId)
    t.equal(message.json.conversation_id, conversationId)
    t.match(message.json.turn_id, /\S/)
    // The transcript shows both sides; the reply is actually played by Web Audio.
    await page.waitForFunction(
      (reply) => globalThis.voxgateDemo.transcript.some((l) => l.role === 'assistant' && l.text === reply && l.final),
      REPLY,
      { timeout: 20_000 },
    )
    await page.waitForFunction(() => globalThis.voxgateDemo.audioPlayedMs > 500, undefined, { timeout: 20_000 })
    t.ok((await page.evaluate(() => globalThis.voxgateDemo.audioPlayedMs)) > 500, 'the page played the reply')
    const state = await page.evaluate(() => globalThis.voxgateDemo)
    t.ok(
      state.transcript.some((l) => l.role === 'user' && l.text === HEARD),
      'user transcript shown',
    )
    t.equal(state.lastError, null)
    t.ok(e2e.stt.connections.length >= 1 && e2e.stt.connections[0]!.audio.length > 8000, 'microphone audio reached speech recognition')
    // The turn is stored once the page reports it played the reply; its breakdown ends at the first frame written
    // to the browser's socket (a browser reports no marks).
    const deadline = Date.now() + 20_000
    let entry: any
    while (entry === undefined && Date.now() < deadline) {
      const details = await e2e.gw.request('GET', `/v1/agents/${e2e.agentId}/sessions/${message.json.session_id}`)
      entry = details.body.transcript?.find((x: any) => x.user_message === HEARD && x.latency_ms !== null)
      if (entry === undefined) await new Promise((r) => setTimeout(r, 100))
    }
    const stages: { name: string; at_ms: number; duration_ms: number }[] = entry?.latency_breakdown?.stages ?? []
    t.equal(stages.at(-1)?.name, 'first_frame_out', 'a browser turn ends at the first frame out')
    t.equal(
      stages.reduce((n, x) => n + x.duration_ms, 0),
      entry?.latency_ms,
      'its stages add up to the turn latency',
    )
    await page.screenshot({ path: process.env.VOXGATE_DEMO_SCREENSHOT ?? '/tmp/voxgate-demo.png', fullPage: true })
    await page.context().close()
  })

  t.test('typed text and data reach the backend; the reply is played', async (t) => {
    const page = await e2e.openDemo({ mic: false })
    await page.fill('[data-testid=text-input]', 'a table by the window please')
    await page.click('[data-testid=send-text]')
    const message = await e2e.waitForRequest((r) => r.json?.type === 'message' && r.json.text === 'a table by the window please')
    const conversationId = await page.evaluate(() => globalThis.voxgateDemo.conversationId)
    t.equal(message.json.conversation_id, conversationId)
    await page.waitForFunction(() => globalThis.voxgateDemo.audioPlayedMs > 500, undefined, { timeout: 20_000 })
    t.ok((await page.evaluate(() => globalThis.voxgateDemo.audioPlayedMs)) > 500, 'the page played the reply')
    // Blank text is not sent by the page; a blank frame sent anyway is ignored by the gateway.
    const before = e2e.requests('message').length
    await page.evaluate(() => (globalThis.voxgateDemo.client as unknown as { sendText(s: string): void }).sendText('   '))
    await page.evaluate(() => (globalThis.voxgateDemo.client as unknown as { sendData(v: unknown): void }).sendData({ cart_id: 42 }))
    const data = await e2e.waitForRequest((r) => r.json?.type === 'data' && r.json.conversation_id === conversationId)
    t.same(data.json.data, { cart_id: 42 })
    t.equal(e2e.requests('message').length, before, 'no message for blank text')
    await page.context().close()
  })

  t.test('reconnect: a fresh session continues the same conversation', async (t) => {
    const page = await e2e.openDemo({ mic: false })
    const send = async (text: string) => {
      await page.fill('[data-testid=text-input]', text)
      await page.click('[data-testid=send-text]')
      return e2e.waitForRequest((r) => r.json?.type === 'message' && r.json.text === text)
    }
    const first = await send('first visit')
    const conversationId = first.json.conversation_id
    // A network drop: the server side of the socket vanishes without a close frame.
    e2e.sockets.at(-1)!.terminate()
    await page.waitForFunction(() => globalThis.voxgateDemo.status === 'disconnected', undefined, { timeout: 10_000 })
    await page.click('[data-testid=reconnect]')
    await page.waitForFunction(() => globalThis.voxgateDemo.status === 'connected', undefined, { timeout: 15_000 })
    t.equal(await page.evaluate(() => globalThis.voxgateDemo.conversationId), conversationId, 'same conversation_id')
    const second = await send('back again')
    t.equal(second.json.conversation_id, conversationId, 'the backend sees the same conversation')
    t.not(second.json.session_id, first.json.session_id, 'in a new session')
    await page.waitForFunction(() => globalThis.voxgateDemo.audioPlayedMs > 500, undefined, { timeout: 20_000 })
    t.ok((await page.evaluate(() => globalThis.voxgateDemo.audioPlayedMs)) > 500, 'the page played the reply')
    const status = await e2e.gw.request('GET', `/v1/agents/${e2e.agentId}/sessions/${first.json.session_id}`)
    t.equal(status.status, 200)
    t.ok(status.body.ended_at, 'the dropped session ended')
    await page.context().close()
  })
}
