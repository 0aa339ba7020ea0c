/**
 * The command bus between replicas: its codec, its channel (in-process on PGlite, LISTEN/NOTIFY on the server,
 * with a reconnect after a lost listening connection), and a session ended through another session manager.
 */
import t from 'tap'
import { sql } from 'kysely'
import { testDb } from '../helpers/db.js'
import { startTestGateway } from '../helpers/gateway.js'
import { SessionManager } from '../../gateway/sessions/session-manager.js'
import { MemoryTransport } from '../helpers/memory-transport.js'
import { decodeSessionCommand, encodeSessionCommand } from '../../gateway/sessions/session-command-codec.js'
import { NOTIFY_PAYLOAD_LIMIT_BYTES, type PgNotifications, type NotificationListener } from '../../gateway/store/notifications.js'
import { silentLogger } from '../../core/log.js'

const onServer = process.env.DATABASE_URL !== undefined
const gw = await startTestGateway()
t.teardown(() => gw.close())

t.test('the codec round-trips a command and refuses what it does not know', async (t) => {
  const text = encodeSessionCommand({ kind: 'end', sessionId: 'sess_abc', reason: 'caller_hangup' })
  t.same(decodeSessionCommand(text), { ok: true, command: { kind: 'end', sessionId: 'sess_abc', reason: 'caller_hangup' } })
  t.ok(Buffer.byteLength(text) < 200, 'a command is small')
  t.match(decodeSessionCommand('{'), { ok: false, reason: 'not JSON' })
  t.match(decodeSessionCommand('{"v":2,"kind":"end"}'), { ok: false, reason: 'unknown version 2' })
  t.match(decodeSessionCommand('{"v":1,"kind":"transfer","session_id":"s","reason":"hangup"}'), { ok: false, reason: /unknown kind/ })
  t.match(decodeSessionCommand('{"v":1,"kind":"end","session_id":"a b","reason":"hangup"}'), { ok: false, reason: 'bad session_id' })
  t.match(decodeSessionCommand('{"v":1,"kind":"end","session_id":"s","reason":"shutdown"}'), { ok: false, reason: 'bad reason' })
})

t.test('a machine detection verdict travels to the replica that runs the call', async (t) => {
  const text = encodeSessionCommand({ kind: 'machine_verdict', sessionId: 'sess_abc', verdict: 'machine_beep' })
  t.same(decodeSessionCommand(text), { ok: true, command: { kind: 'machine_verdict', sessionId: 'sess_abc', verdict: 'machine_beep' } })
  t.match(decodeSessionCommand('{"v":1,"kind":"machine_verdict","session_id":"s","verdict":"fax"}'), { ok: false, reason: 'bad verdict' })
})

t.test('a payload over the NOTIFY limit is refused before it is sent', async (t) => {
  await t.rejects(gw.store.notifications.publish('x'.repeat(NOTIFY_PAYLOAD_LIMIT_BYTES + 1)), RangeError)
  // Multi-byte characters count as bytes, not characters.
  await t.rejects(gw.store.notifications.publish('é'.repeat(NOTIFY_PAYLOAD_LIMIT_BYTES / 2 + 1)), RangeError)
})

/** A second manager on the same store and channel: another replica (on PGlite, in this one process). */
async function anotherReplica(t: { teardown(fn: () => unknown): void }): Promise<SessionManager> {
  const other = new SessionManager(
    { db: gw.store.db, log: silentLogger(), webhookPolicy: { allowInsecureLoopback: true }, usageRatePerMinute: 0 },
    30_000,
    gw.store.notifications,
  )
  await other.start()
  t.teardown(() => other.shutdown(0))
  return other
}

t.test('a session running under another session manager is ended through the bus', async (t) => {
  const other = await anotherReplica(t)
  const agent = (await gw.request('POST', '/v1/agents', { body: {} })).body
  const key = (await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agent.id } })).body.client_session_key
  const opened = await other.open(key, new MemoryTransport(), { ipAddress: null, countryCode: null })
  t.ok(opened.ok)
  if (!opened.ok) return
  t.notOk(gw.gateway.sessions.live.has(opened.session.id), 'the session is not live in the first manager')
  await gw.gateway.sessions.endAnywhere(opened.session.id, 'hangup')
  t.equal(await opened.session.ended, 'hangup', 'the other manager ended it')
  const row = await gw.store.db.selectFrom('sessions').selectAll().where('id', '=', opened.session.id).executeTakeFirstOrThrow()
  t.match(row, { status: 'ended', end_reason: 'hangup', lease_expires_at: null })
})

t.test('POST .../sessions/{id}/end ends a session another session manager runs', async (t) => {
  const other = await anotherReplica(t)
  const agent = (await gw.request('POST', '/v1/agents', { body: {} })).body
  const key = (await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agent.id } })).body.client_session_key
  const authorized = await gw.store.db.selectFrom('sessions').select('id').where('agent_id', '=', agent.id).executeTakeFirstOrThrow()
  const early = await gw.request('POST', `/v1/agents/${agent.id}/sessions/${authorized.id}/end`)
  t.equal(early.status, 409, 'a session not yet connected cannot be ended')
  t.equal(early.body.code, 'session_not_connected')
  const opened = await other.open(key, new MemoryTransport(), { ipAddress: null, countryCode: null })
  t.ok(opened.ok)
  if (!opened.ok) return
  const res = await gw.request('POST', `/v1/agents/${agent.id}/sessions/${opened.session.id}/end`)
  t.equal(res.status, 202)
  t.same(res.body, { session_id: opened.session.id, end_requested: true })
  t.equal(await opened.session.ended, 'hangup', 'ended where it runs')
  const again = await gw.request('POST', `/v1/agents/${agent.id}/sessions/${opened.session.id}/end`)
  t.equal(again.status, 409, 'an ended session cannot be ended again')
  const unknown = await gw.request('POST', `/v1/agents/${agent.id}/sessions/sess_nope/end`)
  t.equal(unknown.status, 404)
  const noKey = await gw.request('POST', `/v1/agents/${agent.id}/sessions/${opened.session.id}/end`, { key: 'vgk_wrong' })
  t.equal(noKey.status, 400, 'the API key is checked first')
})

t.test(
  'the LISTEN connection comes back after the server drops it',
  { skip: !onServer && 'needs DATABASE_URL (LISTEN/NOTIFY)' },
  async (t) => {
    const db = await testDb()
    t.teardown(() => db.cleanup())
    const bus = db.store.notifications as PgNotifications
    const received: string[] = []
    let resyncs = 0
    let wake: () => void = () => undefined
    const next = () => new Promise<void>((r) => (wake = r))
    const listener: NotificationListener = {
      message: (p) => {
        received.push(p)
        wake()
      },
      resync: () => {
        resyncs += 1
        wake()
      },
    }
    let woke = next()
    bus.subscribe(listener)
    await woke
    t.equal(resyncs, 1, 'told to resync once listening')
    woke = next()
    await bus.publish('first')
    await woke
    t.same(received, ['first'])

    const pid = bus.listenerPid
    t.ok(pid, 'a dedicated listening connection')
    woke = next()
    await sql`select pg_terminate_backend(${pid})`.execute(db.store.db)
    await woke
    t.equal(resyncs, 2, 'reconnected and told to resync')
    t.not(bus.listenerPid, pid, 'on a new connection')
    woke = next()
    await bus.publish('second')
    await woke
    t.same(received, ['first', 'second'], 'messages flow again')
  },
)
