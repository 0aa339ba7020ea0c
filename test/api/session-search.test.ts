/**
 * GET /v1/sessions: search (phone, conversation, session, agent, free text), outcome filters and cursor paging,
 * against the real database (PGlite, or the server with DATABASE_URL); an organization never sees another's.
 */
import t from 'tap'
import { sql } from 'kysely'
import { startTestGateway } from '../helpers/gateway.js'
import type { EndReason } from '../../core/end-reason.js'

const gw = await startTestGateway()
t.teardown(() => gw.close())
const db = gw.store.db

async function tenant(name: string, agentNames: string[]) {
  const org = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name } })
  const key = org.body.api_key as string
  const agents: string[] = []
  for (const agentName of agentNames) agents.push((await gw.request('POST', '/v1/agents', { key, body: { name: agentName } })).body.id)
  return { key, agents }
}

interface Call {
  status?: 'connected' | 'ended'
  /** A timestamptz literal (microseconds matter for the cursor), or null: never started. */
  startedAt: string | null
  from?: string
  to?: string
  endReason?: EndReason
  callSid?: string
}

/** A session of `key`'s agent, written as the carrier path would leave it. */
async function call(key: string, agentId: string, c: Call): Promise<{ id: string; conversation: string }> {
  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { key, body: { agent_id: agentId } })
  const row = await db
    .selectFrom('sessions')
    .select(['id'])
    .where('conversation_id', '=', auth.body.conversation_id)
    .executeTakeFirstOrThrow()
  const status = c.status ?? 'ended'
  await db
    .updateTable('sessions')
    .set({
      status,
      channel: c.from === undefined ? 'browser' : 'carrier',
      direction: c.from === undefined ? null : 'inbound',
      from_phone_number: c.from ?? null,
      to_phone_number: c.to ?? null,
      call_sid: c.callSid ?? null,
      started_at: c.startedAt === null ? null : sql<Date>`${c.startedAt}::timestamptz`,
      ended_at: status === 'ended' ? sql<Date>`now()` : null,
      end_reason: status === 'ended' ? (c.endReason ?? 'caller_hangup') : null,
    })
    .where('id', '=', row.id)
    .execute()
  return { id: row.id, conversation: auth.body.conversation_id }
}

const a = await tenant('Org A', ['Sales EU', 'Support desk'])
const b = await tenant('Org B', ['Sales B'])
const [sales, support] = a.agents as [string, string]
const theirAgent = b.agents[0] as string

// Org A's calls, oldest first. Two start in the same millisecond (the cursor must keep microseconds), two at the
// very same instant (the id breaks the tie), one never started (listed at its creation, i.e. now: the newest).
const A = {
  first: await call(a.key, sales, { startedAt: '2026-01-01T10:00:00.000000Z', from: '+15551230001', to: '+442071838750' }),
  busy: await call(a.key, sales, {
    startedAt: '2026-01-02T10:00:00.000000Z',
    from: '+15551230002',
    to: '+442071838750',
    endReason: 'call_busy',
  }),
  sameMsOld: await call(a.key, support, { startedAt: '2026-01-03T10:00:00.123456Z', from: '+4915112345678', to: '+442071838751' }),
  sameMsNew: await call(a.key, support, { startedAt: '2026-01-03T10:00:00.123789Z', endReason: 'client_disconnected' }),
  tieOne: await call(a.key, support, { startedAt: '2026-01-04T10:00:00.000000Z', endReason: 'silence_timeout' }),
  tieTwo: await call(a.key, support, { startedAt: '2026-01-04T10:00:00.000000Z', endReason: 'silence_timeout' }),
  live: await call(a.key, sales, {
    status: 'connected',
    startedAt: '2026-01-05T10:00:00.000000Z',
    from: '+15559990000',
    to: '+442071838750',
    callSid: 'CAlive0001',
  }),
  noAnswer: await call(a.key, sales, { startedAt: null, from: '+442071838750', to: '+15557770000', endReason: 'call_no_answer' }),
}
// Org B: the same numbers, the same agent-name word; never in A's answers.
const B = {
  one: await call(b.key, theirAgent, {
    startedAt: '2026-01-03T12:00:00.000000Z',
    from: '+15551230001',
    to: '+442071838750',
    callSid: 'CAtheirs01',
  }),
  two: await call(b.key, theirAgent, {
    status: 'connected',
    startedAt: '2026-01-05T12:00:00.000000Z',
    from: '+15551230002',
    to: '+442071838750',
  }),
}
const theirIds = Object.values(B).map((s) => s.id)

/** Turns of a session; `failed` marks which carry a failure. */
async function turns(sessionId: string, failed: boolean[]) {
  const row = await db.selectFrom('sessions').select('conversation_id').where('id', '=', sessionId).executeTakeFirstOrThrow()
  for (const [i, f] of failed.entries()) {
    await db
      .insertInto('transcript_entries')
      .values({
        session_id: sessionId,
        conversation_id: row.conversation_id,
        seq: i + 1,
        turn_id: `t${i}`,
        timestamp: new Date(),
        user_message: 'hello?',
        assistant_message: f ? 'Sorry, one moment.' : 'Hi.',
        latency_ms: null,
        failure: f ? JSON.stringify({ cause: 'timeout', waited_ms: 3100, heard: 'Sorry, one moment.', detail: null }) : null,
      })
      .execute()
  }
}
await turns(A.first.id, [false, true, true])
await turns(A.tieOne.id, [true])
await turns(A.busy.id, [false, false])
await turns(B.one.id, [true])

async function ids(query: string, key = a.key): Promise<string[]> {
  const r = await gw.request('GET', `/v1/sessions${query === '' ? '' : `?${query}`}`, { key })
  if (r.status !== 200) throw new Error(`${query}: ${r.status} ${r.text}`)
  for (const s of r.body.sessions) if (key === a.key && theirIds.includes(s.session_id)) throw new Error(`${query} leaked ${s.session_id}`)
  return r.body.sessions.map((s: { session_id: string }) => s.session_id)
}

/** A's sessions in the expected order: newest list time first, the id breaking a tie (descending). */
const tie = [A.tieOne.id, A.tieTwo.id].sort().reverse()
const newestFirst = [A.noAnswer.id, A.live.id, ...tie, A.sameMsNew.id, A.sameMsOld.id, A.busy.id, A.first.id]

t.test('newest first by start (creation when never started), the id breaking ties', async (t) => {
  t.same(await ids(''), newestFirst)
  const r = await gw.request('GET', '/v1/sessions', { key: a.key })
  t.equal(r.body.next_cursor, null, 'everything fits: no next page')
  t.same(await ids('', b.key), [B.two.id, B.one.id], 'B sees its own only')
})

t.test('pages of every size walk the whole list once, in order', async (t) => {
  for (const limit of [1, 2, 3, 7, 8]) {
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const q: string = `limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`
      const r = await gw.request('GET', `/v1/sessions?${q}`, { key: a.key })
      t.equal(r.status, 200)
      t.ok(r.body.sessions.length <= limit)
      seen.push(...r.body.sessions.map((s: { session_id: string }) => s.session_id))
      cursor = r.body.next_cursor
      pages++
    } while (cursor !== null && pages < 20)
    t.same(seen, newestFirst, `limit ${limit}: every session once, in order`)
    t.equal(pages, Math.ceil(newestFirst.length / limit), `limit ${limit}: no empty last page`)
  }
})

t.test('a page after a new call arrived goes on where it stopped', async (t) => {
  const first = await gw.request('GET', '/v1/sessions?limit=3', { key: a.key })
  // Started after the never-started call was created: the newest of all.
  const newer = await call(a.key, sales, { startedAt: new Date(Date.now() + 3_600_000).toISOString() })
  t.teardown(() => db.deleteFrom('sessions').where('id', '=', newer.id).execute())
  const rest = await ids(`limit=50&cursor=${first.body.next_cursor}`)
  t.same([...first.body.sessions.map((s: { session_id: string }) => s.session_id), ...rest], newestFirst, 'nothing skipped or repeated')
  t.equal((await ids('limit=1'))[0], newer.id, 'and a fresh first page shows it')
})

t.test('a cursor filters with the query it is used with', async (t) => {
  const page = await gw.request('GET', '/v1/sessions?status=ended&agent=Support&limit=2', { key: a.key })
  t.same(
    page.body.sessions.map((s: { session_id: string }) => s.session_id),
    tie,
  )
  t.same(await ids(`status=ended&agent=Support&limit=2&cursor=${page.body.next_cursor}`), [A.sameMsNew.id, A.sameMsOld.id])
})

t.test('outcome: status and end reasons', async (t) => {
  t.same(await ids('status=live'), [A.live.id])
  t.same(
    await ids('status=ended'),
    newestFirst.filter((id) => id !== A.live.id),
  )
  t.same(await ids('end_reason=call_busy,call_no_answer'), [A.noAnswer.id, A.busy.id])
  t.same(await ids('status=ended&end_reason=silence_timeout'), tie)
  t.same(await ids('end_reason=transferred'), [], 'a reason no session has: none')
})

t.test('failed turns: only sessions with one, and how many each has', async (t) => {
  t.same(await ids('failed_turns=true'), [A.tieOne.id, A.first.id])
  t.same(await ids('failed_turns=false'), newestFirst, 'false: no filter')
  t.same(await ids('failed_turns=true&status=live'), [])
  t.same(
    await ids(
      'failed_turns=true&limit=1&cursor=' +
        (await gw.request('GET', '/v1/sessions?failed_turns=true&limit=1', { key: a.key })).body.next_cursor,
    ),
    [A.first.id],
    'paged',
  )
  const all = (await gw.request('GET', '/v1/sessions', { key: a.key })).body.sessions
  const counts = Object.fromEntries(
    all.map((s: { session_id: string; failed_turns: number; turns: number }) => [s.session_id, [s.failed_turns, s.turns]]),
  )
  t.same(
    [counts[A.first.id], counts[A.tieOne.id], counts[A.busy.id], counts[A.live.id]],
    [
      [2, 3],
      [1, 1],
      [0, 2],
      [0, 0],
    ],
  )
  t.same(await ids('failed_turns=true', b.key), [B.one.id], 'B sees its own')
})

t.test('phone: E.164, typed with separators, or partial digits; from or to', async (t) => {
  t.same(await ids(`phone=${encodeURIComponent('+15551230001')}`), [A.first.id], 'E.164: only A’s call, not B’s same number')
  t.same(await ids(`phone=${encodeURIComponent('+1 (555) 123-0002')}`), [A.busy.id])
  t.same(await ids('phone=5551230'), [A.busy.id, A.first.id], 'partial digits')
  t.same(await ids('phone=15557770000'), [A.noAnswer.id], 'the called number')
  t.same(await ids('phone=442071838751'), [A.sameMsOld.id])
  t.same(await ids('phone=442071838750'), [A.noAnswer.id, A.live.id, A.busy.id, A.first.id], 'from or to')
})

t.test('conversation, session and agent (id or part of the name)', async (t) => {
  t.same(await ids(`conversation_id=${A.busy.conversation}`), [A.busy.id])
  t.same(await ids(`session_id=${A.sameMsOld.id}`), [A.sameMsOld.id])
  t.same(await ids(`agent=${support}`), [...tie, A.sameMsNew.id, A.sameMsOld.id])
  t.same(await ids('agent=sales%20eu'), [A.noAnswer.id, A.live.id, A.busy.id, A.first.id], 'name, any case')
  t.same(await ids('agent=SALES'), [A.noAnswer.id, A.live.id, A.busy.id, A.first.id], 'part of the name: not B’s Sales B')
  t.same(await ids('agent=%25'), [], '% is a literal character, not a wildcard')
  t.same(await ids(`agent=${support}&end_reason=client_disconnected`), [A.sameMsNew.id], 'criteria combine')
})

t.test('q: one box for ids, names and numbers', async (t) => {
  t.same(await ids(`q=${A.sameMsNew.id}`), [A.sameMsNew.id], 'a session id')
  t.same(await ids(`q=${A.first.conversation}`), [A.first.id], 'a conversation id')
  t.same(await ids('q=CAlive0001'), [A.live.id], 'a carrier call id')
  t.same(await ids(`q=${support}`), [...tie, A.sameMsNew.id, A.sameMsOld.id], 'an agent id')
  t.same(await ids('q=desk'), [...tie, A.sameMsNew.id, A.sameMsOld.id], 'part of an agent name')
  t.same(await ids(`q=${encodeURIComponent('+49 151')}`), [A.sameMsOld.id], 'digits of a number')
  t.same(await ids('q=%20%20'), newestFirst, 'blank: no search')
  t.same(await ids('q=nothing-like-this'), [])
})

t.test("another organization's ids, numbers and agents find nothing", async (t) => {
  for (const q of [
    `q=${B.one.id}`,
    `session_id=${B.one.id}`,
    `conversation_id=${B.one.conversation}`,
    `q=${B.one.conversation}`,
    'q=CAtheirs01',
    `agent=${theirAgent}`,
    'agent=Sales%20B',
    `q=${theirAgent}`,
  ]) {
    t.same(await ids(q), [], q)
  }
  t.same(await ids('phone=15551230001', b.key), [B.one.id], 'B finds its own')
})

t.test('bad parameters: 400 with the error body naming the parameter', async (t) => {
  const cases: [string, RegExp][] = [
    ['phone=abc', /^phone must be an E\.164 number/],
    ['phone=%2B1234567890123456', /^phone must be/],
    ['phone=12%2B34', /^phone must be/],
    ['end_reason=bogus', /^end_reason must be end reasons .*unknown: bogus/],
    ['end_reason=%2C', /^end_reason must be/],
    ['status=live&end_reason=caller_hangup', /^end_reason cannot be combined with status=live/],
    ['cursor=not-a-cursor', /^cursor is not valid/],
    [`cursor=${Buffer.from('["2026-01-01", "x"]').toString('base64url')}`, /^cursor is not valid/],
    [`cursor=${Buffer.from('{"at":1}').toString('base64url')}`, /^cursor is not valid/],
    ['limit=0', /^limit must be at least 1/],
    ['limit=201', /^limit must be at most 200/],
    ['limit=x', /^limit /],
    [`q=${'x'.repeat(201)}`, /^q must be at most 200 characters/],
    ['q=a&q=b', /^q must be a string/],
    ['status=bogus', /^status must be one of live, ended, all/],
    ['failed_turns=yes', /^failed_turns must be one of true, false/],
    ['failed=1', /^failed is not a known field \(did you mean failed_turns\?\)/],
  ]
  for (const [q, message] of cases) {
    const r = await gw.request('GET', `/v1/sessions?${q}`, { key: a.key })
    const label = q.slice(0, 60)
    t.equal(r.status, 400, label)
    t.equal(r.body.code, 'validation_failed', label)
    t.match(r.body.error, message, `${label}: ${r.body.error}`)
  }
})
