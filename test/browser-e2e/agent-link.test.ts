import t from 'tap'
import { toolSkip } from '../helpers/tool-required.js'
import { launchChromium, skipReason } from './e2e-harness.js'
import { startTestGateway } from '../helpers/gateway.js'

// From a fresh start to talking takes no typing: the link printed at first start opens the demo page talking to
// the demo agent, with no API key in the page or any URL, and typed text answered with no vendor key at all.
const skip = toolSkip(skipReason()) || undefined
if (skip !== undefined) {
  t.plan(0, skip)
} else {
  const gw = await startTestGateway()
  t.teardown(() => gw.close())
  const first = gw.firstStart
  if (first === undefined) throw new Error('no first start')
  const token = new URL(first.linkUrl).hash.replace(/^#link=/, '')
  const browser = await launchChromium()
  t.teardown(() => browser.close())

  t.test('the first-start link: one click, then the demo agent answers typed text', async (t) => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const requested: string[] = []
    page.on('request', (r) => requested.push(`${r.url()} ${r.headers().referer ?? ''}`))
    page.on('pageerror', (e) => t.fail(`page error: ${e.message}`))
    // Microphone off: Chromium's fake microphone loops speech, which would barge in on the reply being timed.
    await page.goto(`${gw.url}/?mic=off#link=${token}`)
    t.equal(await page.evaluate(() => (globalThis as any).location.hash), '', 'the token leaves the address bar at once')
    t.ok(await page.isHidden('[data-testid=key-fields]'), 'no API key or agent id to type')
    t.ok(await page.isVisible('[data-testid=link-fields]'))

    await page.click('[data-testid=connect]')
    await page.waitForFunction(() => globalThis.voxgateDemo.status === 'connected', undefined, { timeout: 15_000 })
    await page.fill('[data-testid=text-input]', 'hello there')
    await page.click('[data-testid=send-text]')
    await page.waitForFunction(
      () => globalThis.voxgateDemo.transcript.some((l) => l.role === 'assistant' && l.final && l.text.length > 0),
      undefined,
      { timeout: 30_000 },
    )
    await page.waitForFunction(() => globalThis.voxgateDemo.audioPlayedMs > 300, undefined, { timeout: 30_000 })
    const conversationId = await page.evaluate(() => globalThis.voxgateDemo.conversationId)
    const shown = await page.evaluate(() => globalThis.voxgateDemo.transcript.filter((l) => l.role === 'user').map((l) => l.text))
    t.same(shown, ['hello there'], 'the typed line is shown once')
    // No STT key here, as on a fresh machine: the page says so as information, not as an error in red.
    t.match(await page.textContent('[data-testid=notice]'), /speech recognition is not configured/)
    t.equal(await page.textContent('[data-testid=error]'), '', 'no error line')
    t.equal(await page.evaluate(() => globalThis.voxgateDemo.lastError), null)
    t.same(await page.evaluate(() => globalThis.voxgateDemo.notices.map((n) => n.code)), ['stt_not_configured'])
    const colour = await page.$eval('[data-testid=notice]', (e) => (globalThis as any).getComputedStyle(e).color)
    t.not(colour, 'rgb(198, 40, 40)', 'not in the error colour')
    const session = await gw.store.db
      .selectFrom('sessions')
      .select(['agent_id'])
      .where('conversation_id', '=', conversationId ?? '')
      .executeTakeFirstOrThrow()
    t.equal(session.agent_id, first.agentId, 'a session with the demo agent')
    // The turn is stored once the reply was heard (the page reports playback when its queue drains).
    const stored = async () =>
      (
        await gw.store.db
          .selectFrom('transcript_entries')
          .select(['user_message'])
          .where('conversation_id', '=', conversationId ?? '')
          .execute()
      ).some((x) => x.user_message === 'hello there')
    const deadline = Date.now() + 15_000
    while (!(await stored()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    t.ok(await stored(), 'the typed turn is stored')
    t.notOk(
      requested.some((r) => r.includes(token)),
      'the token is in no request URL or Referer',
    )
    t.ok(await page.evaluate((k) => (globalThis as any).sessionStorage.getItem('voxgate-demo-link') === k, token), 'kept for this tab only')
    await page.screenshot({ path: process.env.VOXGATE_LINK_SCREENSHOT ?? '/tmp/voxgate-demo-link.png', fullPage: true })
    await context.close()
  })

  t.test('a revoked link: the page says so and no session starts', async (t) => {
    const created = await gw.request('POST', `/v1/agents/${first.agentId}/links`)
    await gw.request('DELETE', `/v1/agents/${first.agentId}/links/${created.body.id}`)
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${gw.url}/${new URL(created.body.url).hash}`)
    const before = await gw.store.db.selectFrom('sessions').select('id').execute()
    await page.click('[data-testid=connect]')
    await page.waitForSelector('[data-testid=error]:not(:empty)', { timeout: 15_000 })
    t.match(await page.textContent('[data-testid=error]'), /revoked/)
    t.equal(await page.evaluate(() => globalThis.voxgateDemo.client.connected), false)
    t.equal((await gw.store.db.selectFrom('sessions').select('id').execute()).length, before.length, 'no session authorized')
    await context.close()
  })
}
