import t from 'tap'
import { toolSkip } from '../helpers/tool-required.js'
import { HEARD_PTT, REPLY, skipReason, startE2e } from './e2e-harness.js'

const skip = toolSkip(skipReason()) || undefined
if (skip !== undefined) {
  t.plan(0, skip)
} else {
  const e2e = await startE2e({ pushToTalk: true })
  t.teardown(() => e2e.close())

  t.test('push-to-talk: hold the button while speaking, release, the backend gets the words and the reply plays', async (t) => {
    const page = await e2e.openDemo()
    t.equal(await page.evaluate(() => globalThis.voxgateDemo.client.pushToTalk), true, 'the authorize config says push_to_talk')
    t.equal(await page.textContent('[data-testid=talk]'), 'Hold to talk')
    await page.waitForTimeout(1500)
    t.equal(e2e.requests('message').length, 0, 'nothing is sent while the button is up')
    const micBytesBefore = e2e.stt.connections[0]?.audio.length ?? 0
    const box = (await page.locator('[data-testid=talk]').boundingBox())!
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
    await page.mouse.down()
    // Hold through the WAV's phrase (Chromium loops the 13.4 s file; speech is 1 to 4.4 s into each loop).
    await page.waitForTimeout(4_000)
    await page.mouse.up()
    const message = await e2e.waitForRequest((r) => r.json?.type === 'message' && r.json.text === HEARD_PTT)
    t.ok(message.signatureValid)
    t.equal(message.json.conversation_id, await page.evaluate(() => globalThis.voxgateDemo.conversationId))
    // The page streamed the microphone only between the press and the release.
    const types = e2e.clientTypes
    const start = types.indexOf('trigger.turn.start')
    const end = types.indexOf('trigger.turn.end')
    t.ok(start > 0 && end > start, 'trigger.turn.start then trigger.turn.end')
    t.equal(types.slice(0, start).filter((x) => x === 'client.audio').length, 0, 'no audio before the press')
    t.ok(types.slice(start, end).filter((x) => x === 'client.audio').length >= 30, 'about 10 chunks a second while held')
    t.ok((e2e.stt.connections[0]?.audio.length ?? 0) > micBytesBefore, 'speech recognition got the held audio')
    await page.waitForFunction(
      (reply) => globalThis.voxgateDemo.transcript.some((l) => l.role === 'assistant' && l.text === reply),
      REPLY,
      { timeout: 20_000 },
    )
    await page.waitForFunction(() => globalThis.voxgateDemo.audioPlayedMs > 500, undefined, { timeout: 20_000 })
    t.equal(await page.evaluate(() => globalThis.voxgateDemo.lastError), null)
    await page.context().close()
  })
}
