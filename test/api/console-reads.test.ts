/** The console's read APIs: session list, daily stats, webhook deliveries and their resend; org isolation. */
import t from 'tap'
import { startTestGateway } from '../helpers/gateway.js'
import { startFakeBackend } from '../fakes/backend/fake-backend.js'
import { recordDeliveryAttempt, recordDeliveryStart } from '../../gateway/store/webhook-deliveries.js'
import { WebhookQueue, type DeliveryJournal, type DeliveryResult } from '../../gateway/webhooks/webhook-queue.js'
import { silentLogger } from '../../core/log.js'

const gw = await startTestGateway()
t.teardown(() => gw.close())
const db = gw.store.db

/** An organization with an agent; returns its key and agent id. */
async function tenant(name: string) {
  const org = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name } })
  const key = org.body.api_key as string
  const agent = await gw.request('POST', '/v1/agents', { key, body: { name: `${name} agent` } })
  return { key, orgId: org.body.id as string, agentId: agent.body.id as string, secret: agent.body.webhook_secret as string }
}

/** A session of `who`, moved to `status` with a start time, duration and turns with the given latencies. */
async function session(
  who: { key: string; agentId: string },
  status: 'connected' | 'ended',
  startedAt: Date,
  durationMs: number,
  latencies: number[],
) {
  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { key: who.key, body: { agent_id: who.agentId } })
  const row = await db.selectFrom('sessions').selectAll().where('conversation_id', '=', auth.body.conversation_id).executeTakeFirstOrThrow()
  await db
    .updateTable('sessions')
    .set({
      status,
      started_at: startedAt,
      ended_at: status === 'ended' ? new Date(startedAt.getTime() + durationMs) : null,
      duration_ms: status === 'ended' ? durationMs : null,
    })
    .where('id', '=', row.id)
    .execute()
  let seq = 0
  for (const latency of latencies) {
    await db
      .insertInto('transcript_entries')
      .values({
        session_id: row.id,
        conversation_id: row.conversation_id,
        seq: seq++,
        turn_id: `t${seq}`,
        timestamp: new Date(startedAt.getTime() + seq * 1000),
        user_message: 'hi',
        assistant_message: 'hello',
        latency_ms: latency,
      })
      .execute()
  }
  return row.id
}

const a = await tenant('Org A')
const b = await tenant('Org B')
const today = new Date()
// Noon, so its turns (seconds later) fall on the same UTC day.
const yesterday = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - 1, 12))
const aLive = await session(a, 'connected', today, 0, [120])
const aEnded = await session(a, 'ended', yesterday, 90_000, [100, 200, 300, 400])
const bEnded = await session(b, 'ended', yesterday, 60_000, [999])

t.test('GET /v1/sessions: live, ended, all; only the organization’s own', async (t) => {
  const live = await gw.request('GET', '/v1/sessions?status=live', { key: a.key })
  t.equal(live.status, 200)
  t.same(
    live.body.sessions.map((s: any) => s.session_id),
    [aLive],
  )
  const item = live.body.sessions[0]
  t.equal(item.agent_name, 'Org A agent')
  t.equal(item.turns, 1)
  t.equal(item.status, 'connected')
  t.equal(item.channel, 'browser')
  const ended = await gw.request('GET', '/v1/sessions?status=ended', { key: a.key })
  t.same(
    ended.body.sessions.map((s: any) => [s.session_id, s.turns, s.duration_ms]),
    [[aEnded, 4, 90_000]],
  )
  const all = await gw.request('GET', '/v1/sessions', { key: a.key })
  t.same(all.body.sessions.map((s: any) => s.session_id).sort(), [aLive, aEnded].sort())
  t.notOk(JSON.stringify(all.body).includes(bEnded), "never the other organization's")
  const limited = await gw.request('GET', '/v1/sessions?limit=1', { key: a.key })
  t.equal(limited.body.sessions.length, 1)
  const theirs = await gw.request('GET', '/v1/sessions', { key: b.key })
  t.same(
    theirs.body.sessions.map((s: any) => s.session_id),
    [bEnded],
  )
})

t.test('GET /v1/sessions: bad queries get the error body', async (t) => {
  for (const q of ['status=bogus', 'limit=0', 'limit=201', 'limit=x', 'other=1']) {
    const r = await gw.request('GET', `/v1/sessions?${q}`, { key: a.key })
    t.equal(r.status, 400, q)
    t.equal(r.body.code, 'validation_failed', q)
  }
  t.equal((await gw.request('GET', '/v1/sessions', { key: null })).status, 400, 'needs a key')
})

t.test('GET /v1/stats/daily: minutes and latency percentiles per UTC day', async (t) => {
  const r = await gw.request('GET', '/v1/stats/daily?days=7', { key: a.key })
  t.equal(r.status, 200)
  t.equal(r.body.days.length, 7, 'every day, quiet ones too')
  t.equal(r.body.days.at(-1).date, today.toISOString().slice(0, 10), 'today last')
  const y = r.body.days.find((d: any) => d.date === yesterday.toISOString().slice(0, 10))
  // percentile_cont over 100, 200, 300, 400: p50 250, p90 370, p99 397.
  t.same(y, { date: y.date, sessions: 1, minutes: 1.5, turns: 4, latency_p50_ms: 250, latency_p90_ms: 370, latency_p99_ms: 397 })
  const quiet = r.body.days[0]
  t.same([quiet.sessions, quiet.minutes, quiet.turns, quiet.latency_p50_ms], [0, 0, 0, null])
  const theirs = await gw.request('GET', '/v1/stats/daily?days=7', { key: b.key })
  const by = theirs.body.days.find((d: any) => d.date === y.date)
  t.equal(by.latency_p50_ms, 999, "the other organization's own turns only")
  t.equal((await gw.request('GET', '/v1/stats/daily?days=0', { key: a.key })).status, 400)
  t.equal((await gw.request('GET', '/v1/stats/daily?days=367', { key: a.key })).status, 400)
})

t.test('webhook deliveries: listed, a failed one resent once, other organizations get 404', async (t) => {
  const backend = await startFakeBackend({ secret: a.secret, path: '/hooks' })
  t.teardown(() => backend.close())
  backend.reply = () => ({ kind: 'status', status: 200 })
  const body = JSON.stringify({ type: 'session.end', session_id: aEnded })
  const failed = await recordDeliveryStart(db, { sessionId: aEnded, organizationId: a.orgId, type: 'session.end', url: backend.url, body })
  await recordDeliveryAttempt(db, failed, { ok: false, attempts: 4, status: 503, final: true })
  const done = await recordDeliveryStart(db, {
    sessionId: aEnded,
    organizationId: a.orgId,
    type: 'session.start',
    url: backend.url,
    body: '{}',
  })
  await recordDeliveryAttempt(db, done, { ok: true, attempts: 1, status: 200, final: true })
  const base = `/v1/agents/${a.agentId}/sessions/${aEnded}/webhook_deliveries`

  const list = await gw.request('GET', base, { key: a.key })
  t.equal(list.status, 200)
  t.same(
    list.body.deliveries.map((d: any) => [d.type, d.status, d.attempts, d.response_status]),
    [
      ['session.end', 'failed', 4, 503],
      ['session.start', 'delivered', 1, 200],
    ],
  )
  t.notOk('body' in list.body.deliveries[0], 'the body is not listed')

  const notFailed = await gw.request('POST', `${base}/${done}/redeliver`, { key: a.key })
  t.equal(notFailed.status, 409)
  t.equal(notFailed.body.code, 'webhook_delivery_not_failed')
  const unknown = await gw.request('POST', `${base}/whd_nope/redeliver`, { key: a.key })
  t.equal(unknown.status, 404)
  t.equal(unknown.body.code, 'webhook_delivery_not_found')
  const foreign = await gw.request('POST', `${base}/${failed}/redeliver`, { key: b.key })
  t.equal(foreign.status, 404)
  t.equal(foreign.body.code, 'session_not_found', 'another organization: like a missing session')
  t.equal((await gw.request('GET', base, { key: b.key })).status, 404)

  // Two clicks at once: one resend reaches the backend.
  const [one, two] = await Promise.all([
    gw.request('POST', `${base}/${failed}/redeliver`, { key: a.key }),
    gw.request('POST', `${base}/${failed}/redeliver`, { key: a.key }),
  ])
  t.same([one.status, two.status].sort(), [200, 409])
  const ok = one.status === 200 ? one : two
  t.same([ok.body.status, ok.body.attempts, ok.body.response_status], ['delivered', 5, 200])
  t.equal(backend.requests.length, 1)
  t.equal(backend.requests[0]?.raw, body, 'the stored body, unchanged')
  t.ok(backend.requests[0]?.signatureValid, "signed with the agent's secret")
})

t.test('WebhookQueue tells its journal each attempt, the last one final', async (t) => {
  const backend = await startFakeBackend({ secret: 's3cret', path: '/q' })
  t.teardown(() => backend.close())
  let n = 0
  backend.reply = () => ({ kind: 'status', status: ++n < 3 ? 500 : 204 })
  const calls: string[] = []
  const journal: DeliveryJournal = {
    async begin(type, body, url) {
      calls.push(`begin ${type} ${body} ${url === backend.url}`)
      return 'j1'
    },
    async attempted(id, r: DeliveryResult, final) {
      calls.push(`${id} ${r.attempts} ${r.status} ${final}`)
    },
  }
  const q = new WebhookQueue({ url: backend.url, secret: 's3cret' }, silentLogger(), {
    policy: { allowInsecureLoopback: true },
    backoffMs: [5],
    journal,
  })
  q.send({ type: 'session.end' })
  await q.drain(5_000)
  t.same(calls, ['begin session.end {"type":"session.end"} true', 'j1 1 500 false', 'j1 2 500 false', 'j1 3 204 true'])
})
