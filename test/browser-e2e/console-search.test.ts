/**
 * The console's calls list in Chromium: search by number, filter by outcome, page with Older/Newest and Back, a
 * linked view opens as it was, another organization's calls never show; and a turn without latency says why.
 * Sessions are written to the real database as calls leave them. Screenshots go to test/artifacts/.
 */
import t from 'tap'
import { toolSkip } from '../helpers/tool-required.js'
import { mkdirSync } from 'node:fs'
import { sql } from 'kysely'
import { chromium, type Browser, type Page } from 'playwright-core'
import { startTestGateway } from '../helpers/gateway.js'
import { CHROMIUM, skipReason } from './e2e-harness.js'
import type { EndReason } from '../../core/end-reason.js'

const skip = toolSkip(skipReason()) || undefined
if (skip !== undefined) {
  t.plan(0, skip)
} else {
  const ARTIFACTS = new URL('../artifacts/', import.meta.url).pathname
  mkdirSync(ARTIFACTS, { recursive: true })
  const gw = await startTestGateway()
  const db = gw.store.db

  const tenant = async (name: string) => {
    const org = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name } })
    const key = org.body.api_key as string
    const agent = await gw.request('POST', '/v1/agents', { key, body: { name: `${name} agent` } })
    return { key, agentId: agent.body.id as string }
  }
  /** An ended phone call of `who`, started `minutesAgo` minutes ago. */
  const call = async (who: { key: string; agentId: string }, minutesAgo: number, from: string, endReason: EndReason = 'caller_hangup') => {
    const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { key: who.key, body: { agent_id: who.agentId } })
    const row = await db
      .selectFrom('sessions')
      .select('id')
      .where('conversation_id', '=', auth.body.conversation_id)
      .executeTakeFirstOrThrow()
    await db
      .updateTable('sessions')
      .set({
        status: 'ended',
        channel: 'carrier',
        direction: 'inbound',
        from_phone_number: from,
        to_phone_number: '+442071838750',
        started_at: sql<Date>`now() - make_interval(mins => ${minutesAgo})`,
        ended_at: sql<Date>`now()`,
        duration_ms: 30_000,
        end_reason: endReason,
      })
      .where('id', '=', row.id)
      .execute()
    return row.id
  }

  const a = await tenant('Search A')
  const b = await tenant('Search B')
  // 27 ordinary calls (more than a page of 25), one busy, one from a number searched for; B has that number too.
  const ordinary: string[] = []
  for (let i = 0; i < 27; i++) ordinary.push(await call(a, 100 + i, `+1555000${String(i).padStart(4, '0')}`))
  const busy = await call(a, 50, '+15557654321', 'call_busy')
  const wanted = await call(a, 40, '+4915112345678')
  const theirs = await call(b, 30, '+4915112345678')
  // A welcome turn (the agent spoke first): its row must say so, not show an empty waterfall.
  const wantedRow = await db.selectFrom('sessions').selectAll().where('id', '=', wanted).executeTakeFirstOrThrow()
  await db
    .insertInto('transcript_entries')
    .values({
      session_id: wanted,
      conversation_id: wantedRow.conversation_id,
      seq: 1,
      turn_id: 'welcome',
      timestamp: new Date(),
      user_message: null,
      assistant_message: 'Hello, how can I help?',
      latency_ms: null,
    })
    .execute()

  // The busy call had a turn whose backend timed out: the caller waited 3.4 s and heard the fallback.
  const busyRow = await db.selectFrom('sessions').selectAll().where('id', '=', busy).executeTakeFirstOrThrow()
  await db
    .insertInto('transcript_entries')
    .values({
      session_id: busy,
      conversation_id: busyRow.conversation_id,
      seq: 1,
      turn_id: 'timed-out',
      timestamp: new Date(),
      user_message: 'are you open on sundays',
      assistant_message: 'Sorry, one moment please.',
      latency_ms: null,
      failure: JSON.stringify({
        cause: 'timeout',
        waited_ms: 3400,
        heard: 'Sorry, one moment please.',
        detail: 'no speakable reply within 3000 ms',
      }),
    })
    .execute()

  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  })
  t.teardown(async () => {
    await browser.close()
    await gw.close()
  })
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } })
  const page = await context.newPage()
  const pageErrors: string[] = []
  page.on('pageerror', (e) => pageErrors.push(String(e)))
  const shot = (p: Page, name: string) => p.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true })
  const listed = (p: Page = page) =>
    p.$$eval('#recent-sessions tr[data-session-id]', (rows) => rows.map((r) => r.getAttribute('data-session-id') ?? ''))
  /** Waits until the ended list shows exactly `ids`, in order (it refreshes itself); fails with what it shows. */
  const waitForList = async (ids: string[], p: Page = page) => {
    const until = Date.now() + 10_000
    let shown: string[] = []
    while (Date.now() < until) {
      // A reload in between destroys the context of an evaluation: read again.
      shown = await listed(p).catch(() => shown)
      if (JSON.stringify(shown) === JSON.stringify(ids)) return
      await new Promise((r) => setTimeout(r, 50))
    }
    throw new Error(`the list shows ${JSON.stringify(shown)}, not ${JSON.stringify(ids)}`)
  }
  const apiIds = async (query: string) =>
    (await gw.request('GET', `/v1/sessions?${query}`, { key: a.key })).body.sessions.map((s: { session_id: string }) => s.session_id)

  t.test('sign in: the newest page of calls', async (t) => {
    await page.goto(`${gw.url}/console`)
    await page.fill('#signin-key', a.key)
    await page.click('#signin-submit')
    await page.waitForSelector('#recent-sessions tr[data-session-id]')
    const newest = await apiIds('status=ended&limit=50')
    t.equal(newest.length, 29)
    await waitForList(newest)
    t.equal(await page.$(`tr[data-session-id="${theirs}"]`), null, "B's call with the same number is not listed")
    t.equal(await page.$('#older-calls'), null, 'all fit on a page of 50: no Older link')
  })

  t.test('search by part of a number, then filter by outcome, then clear', async (t) => {
    await page.fill('#call-search', '+49 151')
    await page.press('#call-search', 'Enter')
    await waitForList([wanted])
    t.match(page.url(), /#\/sessions\?q=%2B49\+151$/, 'the search is in the hash')
    t.equal(await page.$(`tr[data-session-id="${theirs}"]`), null, 'not the other organization’s')
    await shot(page, 'console-search')

    await page.fill('#call-search', '')
    await page.selectOption('#outcome-filter', 'call_busy')
    await waitForList([busy])
    t.match(page.url(), /outcome=call_busy/)
    t.equal(await page.$('#live-box'), null, 'an end reason leaves the live list out')

    await page.fill('#call-search', 'nothing-like-this')
    await page.click('#search-submit')
    await page.waitForSelector('#recent-sessions:has-text("No ended call matches.")')
    await page.click('#search-clear')
    await waitForList(await apiIds('status=ended&limit=50'))
    t.match(page.url(), /#\/sessions$/)
  })

  t.test('pages: Older, Back, Newest; each page as the API pages', async (t) => {
    await page.selectOption('#page-size', '25')
    const first = (await gw.request('GET', '/v1/sessions?status=ended&limit=25', { key: a.key })).body
    await waitForList(first.sessions.map((s: { session_id: string }) => s.session_id))
    await page.click('#older-calls')
    const second = await apiIds(`status=ended&limit=25&cursor=${first.next_cursor}`)
    t.equal(second.length, 4, 'the rest: 29 calls, 25 then 4')
    await waitForList(second)
    t.match(page.url(), /limit=25&cursor=/, 'the page is in the hash')
    t.equal(await page.$('#older-calls'), null, 'the last page has no Older link')
    t.same(
      [...(await listed()), ...first.sessions.map((s: { session_id: string }) => s.session_id)].sort(),
      [...ordinary, busy, wanted].sort(),
    )
    await shot(page, 'console-page-two')
    const pageTwo = page.url()

    await page.goBack()
    await waitForList(first.sessions.map((s: { session_id: string }) => s.session_id))
    t.pass('Back returns to the first page')
    await page.goForward()
    await waitForList(second)
    await page.click('#newest-calls')
    await waitForList(first.sessions.map((s: { session_id: string }) => s.session_id))

    // A linked page opens as it was, in a tab of its own (same sign-in: sessionStorage is per tab, so sign in).
    const linked = await context.newPage()
    linked.on('pageerror', (e) => pageErrors.push(String(e)))
    await linked.goto(pageTwo)
    await linked.fill('#signin-key', a.key)
    await linked.click('#signin-submit')
    await waitForList(second, linked)
    t.equal(await linked.inputValue('#page-size'), '25', 'the controls show the linked state')
    await linked.close()
  })

  t.test('a linked search opens filled in', async (t) => {
    await page.goto(`${gw.url}/console#/sessions?q=${encodeURIComponent('+15557654321')}&outcome=ended`)
    await page.reload()
    await waitForList([busy])
    t.equal(await page.inputValue('#call-search'), '+15557654321')
    t.equal(await page.inputValue('#outcome-filter'), 'ended')
  })

  t.test('calls with failed turns; a timed-out turn shows its cause and the wait', async (t) => {
    await page.goto(`${gw.url}/console#/sessions`)
    await page.selectOption('#outcome-filter', 'failed')
    await waitForList([busy])
    t.match(await page.textContent(`#recent-sessions tr[data-session-id="${busy}"] .turns`), /1 failed/)
    await page.click(`#recent-sessions tr[data-session-id="${busy}"]`)
    await page.waitForSelector('.turn-row[data-turn="0"].failed')
    t.equal(await page.getAttribute('.turn-row[data-turn="0"] .turn-failure', 'data-cause'), 'timeout')
    t.equal(
      await page.textContent('.turn-row[data-turn="0"] .failure-cause'),
      'Failed: backend timed out (no speakable reply within 3.0 s)',
    )
    t.equal(await page.textContent('.turn-row[data-turn="0"] .failure-wait'), "caller waited 3.4 s, heard: 'Sorry, one moment please.'")
    t.notMatch(await page.textContent('#turns-box'), /no latency measured/)
    t.equal(await page.textContent('#failed-turns'), '1')
    await shot(page, 'console-failed-turn')
  })

  t.test('a turn without latency says why', async (t) => {
    await page.goto(`${gw.url}/console#/session/${a.agentId}/${wanted}`)
    await page.waitForSelector('.turn-row[data-turn="0"]')
    const note = await page.textContent('.turn-row[data-turn="0"] .wf-turn')
    t.match(note, /agent spoke first \(welcome\)/)
    t.notMatch(note, /no latency measured \(welcome or typed turn\)/)
    t.equal(await page.textContent('#failed-turns'), '0')
  })

  t.test('a hand-edited link the API refuses shows its message; no script errors', async (t) => {
    await page.goto(`${gw.url}/console#/sessions?cursor=not-a-cursor`)
    await page.waitForSelector('#recent-box .error')
    t.match(await page.textContent('#recent-box .error'), /Could not load calls: cursor is not valid/)
    t.same(pageErrors, [], 'the page raised no script errors')
  })
}
