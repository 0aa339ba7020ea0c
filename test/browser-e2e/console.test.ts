/**
 * The operator console in Chromium against a running gateway with the carrier simulator: sign in (a wrong key
 * refused), watch a phone call appear live, open it, check each turn's waterfall against the API's numbers, play
 * the recording, send a failed session.end webhook again and see it delivered, and see nothing of another
 * organization. Screenshots go to test/artifacts/.
 */
import t from 'tap'
import { toolSkip } from '../helpers/tool-required.js'
import { mkdirSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'
import { CHROMIUM, skipReason } from './e2e-harness.js'
import { ADMIN_TOKEN } from '../helpers/gateway.js'
import { connectTwoTurnCall, eventually, newBackendTenant, sessionOfCall, speech, startVoiceWorld } from '../carrier-e2e/carrier-setup.js'
import { startFakeBackend, type FakeBackend } from '../fakes/backend/fake-backend.js'

const skip = toolSkip(skipReason()) || undefined
if (skip !== undefined) {
  t.plan(0, skip)
} else {
  const ARTIFACTS = new URL('../artifacts/', import.meta.url).pathname
  mkdirSync(ARTIFACTS, { recursive: true })
  const shot = (page: Page, name: string) => page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true })

  const { c, transcripts } = await startVoiceWorld(t)
  // The session webhook goes to its own fake, which answers session.end with 500 until told otherwise.
  let lifecycle: FakeBackend | undefined
  let failSessionEnd = true
  const { tenant, backend } = await newBackendTenant(t, c, 'console-token', (config) => {
    config.session_webhook = { url: 'http://127.0.0.1:1/placeholder', events: ['session.start', 'session.end'] }
  })
  lifecycle = await startFakeBackend({ secret: tenant.webhookSecret, path: '/hooks/session' })
  t.teardown(() => lifecycle?.close())
  lifecycle.reply = (req) => ({ kind: 'status', status: req.json?.type === 'session.end' && failSessionEnd ? 500 : 200 })
  const agent = (await c.gw.request('GET', `/v1/agents/${tenant.agentId}`, { key: tenant.apiKey })).body
  agent.config.session_webhook.url = lifecycle.url
  const saved = await c.gw.request('POST', `/v1/agents/${tenant.agentId}`, { key: tenant.apiKey, body: { config: agent.config } })
  // Setup, not an assertion: an assertion here would let tap end the root test (and tear the gateway down) early.
  if (saved.status !== 200) throw new Error(saved.text)
  await c.gw.request('PATCH', `/admin/v1/organizations/${tenant.orgId}`, { admin: true, body: { recording_enabled: true } })
  // Another organization with a call of its own.
  const other = await newBackendTenant(t, c, 'other-token')

  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--autoplay-policy=no-user-gesture-required'],
  })
  t.teardown(() => browser.close())
  const page = await (await browser.newContext({ viewport: { width: 1360, height: 900 } })).newPage()
  const pageErrors: string[] = []
  page.on('pageerror', (e) => pageErrors.push(String(e)))
  const api = (path: string, key = tenant.apiKey) => c.gw.request('GET', path, { key })

  t.test('a wrong key is refused; the right one opens the console', async (t) => {
    await page.goto(`${c.gw.url}/console`)
    await page.fill('#signin-key', 'vgk_wrong_key_for_sure')
    await page.click('#signin-submit')
    await page.waitForSelector('#signin-error:has-text("refused")')
    t.equal(await page.$('#content'), null, 'no console without a valid key')
    await shot(page, 'console-signin-refused')
    await page.fill('#signin-key', tenant.apiKey)
    await page.click('#signin-submit')
    await page.waitForSelector('#live-box')
    t.match(await page.textContent('#org-name'), /carrier-/)
  })

  let sessionId = ''
  let callEnded: Promise<unknown> = Promise.resolve()
  t.test('a call appears live, is opened, and its turns show as waterfalls with the API numbers', async (t) => {
    const { callSid, call, row } = await connectTwoTurnCall(c, tenant, backend, transcripts)
    sessionId = row.id
    const connectedAt = Date.now()
    await page.waitForSelector(`#live-sessions tr[data-session-id="${row.id}"]`, { timeout: 10_000 })
    t.comment(`the call showed in the live list ${Date.now() - connectedAt} ms after its session row existed`)
    t.match(await page.textContent(`#live-sessions tr[data-session-id="${row.id}"]`), new RegExp(`\\+442071838750 → \\${tenant.number}`))
    await shot(page, 'console-live')
    await page.click(`#live-sessions tr[data-session-id="${row.id}"]`)
    await page.waitForSelector('#session-status:has-text("live")')

    const allHeard = () =>
      eventually(async () => (call.marks.length > 0 && call.earpiece.pendingMarks().length === 0 ? true : undefined), 10_000)
    const details = async () => (await api(`/v1/agents/${tenant.agentId}/sessions/${row.id}`)).body
    await allHeard()
    for (const phrase of ['what are your opening hours', 'and on sundays']) {
      await call.sendAudio(speech('two-phrases.wav'))
      await eventually(async () => {
        const d = await details()
        return d.transcript.find((e: any) => e.user_message === phrase && e.latency_ms !== null)
      }, 15_000)
      await allHeard()
    }
    await page.waitForSelector('.turn-row[data-turn="2"] .wf-bar', { timeout: 5_000 })
    await shot(page, 'console-session-live')
    await call.hangup()
    callEnded = eventually(async () => ((await sessionOfCall(c, callSid))?.status === 'ended' ? true : undefined))
    await callEnded
    await page.waitForSelector('#session-status:has-text("caller_hangup")', { timeout: 5_000 })

    const d = await details()
    const rows = await page.$$eval('.turn-row', (els) =>
      els.map((el) => ({
        text: el.querySelector('.turn-text')?.textContent ?? '',
        total: el.querySelector('.wf-turn')?.getAttribute('data-latency-ms') ?? '',
        bars: [...el.querySelectorAll('.wf-bar')].map((b) => ({
          name: b.getAttribute('data-stage'),
          at_ms: Number(b.getAttribute('data-at-ms')),
          duration_ms: Number(b.getAttribute('data-duration-ms')),
        })),
      })),
    )
    t.equal(rows.length, d.transcript.length, 'one row per transcript entry')
    let checked = 0
    d.transcript.forEach((entry: any, i: number) => {
      const shown = rows[i] as (typeof rows)[number]
      if (entry.user_message !== null) t.ok(shown.text.includes(entry.user_message), `turn ${i}: the caller's words`)
      if (entry.assistant_message !== null) t.ok(shown.text.includes(entry.assistant_message), `turn ${i}: the agent's words`)
      if (entry.latency_breakdown === null) {
        t.same(shown.bars, [], `turn ${i}: no latency, no bars`)
        return
      }
      const stages = entry.latency_breakdown.stages as { name: string; at_ms: number; duration_ms: number }[]
      t.same(
        shown.bars,
        stages.filter((s) => s.name !== 'user_speech_end'),
        `turn ${i}: every stage as a bar with the API's numbers`,
      )
      t.equal(Number(shown.total), entry.latency_ms, `turn ${i}: the total is the API's latency_ms`)
      checked++
    })
    t.equal(checked, 2, 'both answered turns have waterfalls')

    // The recording arrives once the session is over; the player loads it (fetched with the key).
    await page.waitForSelector('#recording-player', { timeout: 10_000 })
    const seconds = await page.$eval('#recording-player', (a) => {
      const audio = a as unknown as { readyState: number; duration: number; addEventListener(e: string, f: () => void): void }
      return audio.readyState >= 1
        ? audio.duration
        : new Promise<number>((r) => audio.addEventListener('loadedmetadata', () => r(audio.duration)))
    })
    const ended = await sessionOfCall(c, row.call_sid as string)
    t.ok(Math.abs(seconds * 1000 - (ended?.duration_ms ?? 0)) < 100, `the player has the whole call (${seconds} s)`)
  })

  t.test('a failed session.end is sent again from the console and succeeds', async (t) => {
    const list = () => api(`/v1/agents/${tenant.agentId}/sessions/${sessionId}/webhook_deliveries`)
    const failed = await eventually(async () => {
      const ds = (await list()).body.deliveries
      return ds.find((x: any) => x.type === 'session.end' && x.status === 'failed')
    }, 15_000)
    t.equal(failed.attempts, 4, 'retried, then given up')
    t.equal(failed.response_status, 500)
    const start = (await list()).body.deliveries.find((x: any) => x.type === 'session.start')
    t.equal(start?.status, 'delivered')
    const selector = `#deliveries tr[data-delivery-id="${failed.id}"]`
    await page.waitForSelector(`${selector}[data-status="failed"] button.redeliver`, { timeout: 5_000 })
    t.equal(await page.$eval(`${selector} .attempts`, (e) => e.textContent), '4')
    t.equal(await page.$eval(`${selector} .response-status`, (e) => e.textContent), '500')
    await shot(page, 'console-session-failed-webhook')
    const before = lifecycle?.requests.filter((r) => r.json?.type === 'session.end') ?? []
    failSessionEnd = false
    await page.click(`${selector} button.redeliver`)
    await page.waitForSelector(`${selector}[data-status="delivered"]`, { timeout: 10_000 })
    await shot(page, 'console-session')
    const after = lifecycle?.requests.filter((r) => r.json?.type === 'session.end') ?? []
    t.equal(after.length, before.length + 1, 'one more request')
    const last = after.at(-1)
    t.equal(last?.raw, before[0]?.raw, 'the same body as the first attempt')
    t.ok(last?.signatureValid, 'signed afresh')
    const now = (await list()).body.deliveries.find((x: any) => x.id === failed.id)
    t.same(
      { status: now.status, attempts: now.attempts, response_status: now.response_status },
      { status: 'delivered', attempts: 5, response_status: 200 },
    )
    t.equal(await page.$(`${selector} button.redeliver`), null, 'no resend button once delivered')
  })

  t.test("one organization never sees another's sessions", async (t) => {
    const { callSid, call, row } = await connectTwoTurnCall(c, other.tenant, other.backend, transcripts)
    await call.hangup()
    await eventually(async () => ((await sessionOfCall(c, callSid))?.status === 'ended' ? true : undefined))
    const mine = (await api('/v1/sessions?status=all')).body.sessions.map((s: any) => s.session_id)
    t.ok(mine.includes(sessionId))
    t.notOk(mine.includes(row.id), "the other organization's call is not listed")
    const theirs = (await api('/v1/sessions?status=all', other.tenant.apiKey)).body.sessions.map((s: any) => s.session_id)
    t.same(theirs, [row.id], 'and it sees only its own')
    const cross = await api(`/v1/agents/${other.tenant.agentId}/sessions/${row.id}/webhook_deliveries`)
    t.equal(cross.status, 404)
    t.equal(cross.body.code, 'session_not_found', 'a 404 like a missing session')
    await page.goto(`${c.gw.url}/console#/sessions`)
    await page.waitForSelector(`#recent-sessions tr[data-session-id="${sessionId}"]`, { timeout: 10_000 })
    t.equal(await page.$(`tr[data-session-id="${row.id}"]`), null, 'not in the console list')
    await shot(page, 'console-sessions')
    await page.goto(`${c.gw.url}/console#/session/${other.tenant.agentId}/${row.id}`)
    await page.waitForSelector('#session-missing')
    t.notOk((await page.textContent('body'))?.includes('+442071838750 →'), 'nothing of the call shows')
  })

  t.test('usage and latency charts show the API figures', async (t) => {
    await page.goto(`${c.gw.url}/console#/usage`)
    await page.waitForSelector('#daily-table tbody tr')
    const today = new Date().toISOString().slice(0, 10)
    const stats = (await api('/v1/stats/daily?days=30')).body.days.find((d: any) => d.date === today)
    t.ok(stats.minutes > 0 && stats.turns >= 2, `today has traffic: ${JSON.stringify(stats)}`)
    const shown = await page.$eval(`#daily-table tr[data-date="${today}"]`, (tr) => ({
      minutes: tr.querySelector('.minutes')?.textContent,
      p50: tr.querySelector('.p50')?.textContent,
      p90: tr.querySelector('.p90')?.textContent,
    }))
    t.same(shown, {
      minutes: stats.minutes.toFixed(2),
      p50: String(Math.round(stats.latency_p50_ms)),
      p90: String(Math.round(stats.latency_p90_ms)),
    })
    t.equal(await page.$$eval('#minutes-chart canvas, #latency-chart canvas', (cs) => cs.length), 2, 'two uPlot charts drawn')
    await shot(page, 'console-usage')
  })

  t.test('agents: set the webhook URL, assign and unassign a number', async (t) => {
    await page.goto(`${c.gw.url}/console#/agents`)
    const card = `.agent[data-agent-id="${tenant.agentId}"]`
    await page.waitForSelector(card)
    t.equal(await page.inputValue(`${card} .webhook-url`), backend.url, "the agent's webhook URL")
    await page.fill(`${card} .webhook-url`, 'http://127.0.0.1:9/new-backend')
    await page.click(`${card} .save-webhook`)
    await page.waitForSelector(`${card} .ok-text`)
    const saved = (await api(`/v1/agents/${tenant.agentId}`)).body.config.plugins.find((p: any) => p.use === 'agent.webhook')
    t.equal(saved.options.url, 'http://127.0.0.1:9/new-backend')
    // The operator reserves the number for the organization first: only then may its agents claim it.
    const reserved = await c.gw.request(
      'PUT',
      `/admin/v1/organizations/${tenant.orgId}/phone_numbers/${encodeURIComponent('+14155550199')}`,
      {
        admin: true,
      },
    )
    t.equal(reserved.status, 201)
    await page.fill(`${card} .phone-number`, '+14155550199')
    await page.fill(`${card} .friendly-name`, 'Support line')
    await page.click(`${card} .assign-number`)
    await page.waitForSelector(`${card} tr[data-number="+14155550199"]`)
    await shot(page, 'console-agents')
    const numbers = () => api('/v1/agents').then((r) => r.body.agents[0].assigned_phone_numbers.map((n: any) => n.phone_number))
    t.ok((await numbers()).includes('+14155550199'))
    await page.click(`${card} button.unassign[data-number="+14155550199"]`)
    await page.waitForSelector(`${card} tr[data-number="+14155550199"]`, { state: 'detached' })
    t.notOk((await numbers()).includes('+14155550199'))
    await page.fill(`${card} .phone-number`, 'not a number')
    await page.click(`${card} .assign-number`)
    await page.waitForSelector(`${card} .error:has-text("phone")`)
  })

  t.test('the admin token, then an organization, opens that organization’s console', async (t) => {
    const admin = await (await browser.newContext({ viewport: { width: 1360, height: 900 } })).newPage()
    admin.on('pageerror', (e) => pageErrors.push(String(e)))
    await admin.goto(`${c.gw.url}/console`)
    await admin.fill('#signin-admin-token', ADMIN_TOKEN)
    await admin.click('#signin-submit')
    await admin.waitForSelector('#org-picker')
    await admin.selectOption('#org-picker', other.tenant.orgId)
    await admin.click('#org-continue')
    await admin.waitForSelector('#recent-sessions tr[data-session-id]')
    const ids = await admin.$$eval('#recent-sessions tr[data-session-id]', (rows) => rows.map((r) => r.getAttribute('data-session-id')))
    const theirs = (await api('/v1/sessions?status=ended', other.tenant.apiKey)).body.sessions.map((s: any) => s.session_id)
    t.same(ids, theirs, "the picked organization's calls, and only those")
    t.match(await admin.textContent('.who'), /operator/)
    await admin.click('#sign-out')
    await admin.waitForSelector('#signin-submit')
    t.pass('signing out returns to the sign-in')
  })

  t.test('the page raised no script errors', async (t) => {
    t.same(pageErrors, [])
  })
}
