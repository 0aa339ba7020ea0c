/**
 * Postgres restarted under live phone calls: the calls keep talking (the audio path never waits on the
 * database), turns finished while it was down are stored once it is back, new sessions are refused with 503
 * meanwhile, /readyz says so, and no process crashes. The database server is the test's own (a new cluster on a
 * port of its own, test/helpers/pg-cluster.ts) so stopping it touches no other test file; the calls run on a
 * gateway in a child process, set up through one in this process.
 */
import t from 'tap'
import { toolSkip } from '../helpers/tool-required.js'
import { placeCall, newCallSid, type SimulatedCall } from '../fakes/carrier/phone-simulator.js'
import { startFakeDeepgram, transcriptsInTurn } from '../fakes/deepgram/fake-deepgram.js'
import { startFakeElevenLabs } from '../fakes/elevenlabs/fake-elevenlabs.js'
import { testDb } from '../helpers/db.js'
import { postgresBinDir, startPgCluster } from '../helpers/pg-cluster.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { parseScrape } from '../metrics/prom-text.js'
import {
  eventually,
  finishedTurnsOf,
  newBackendTenant,
  PUBLIC_URL,
  sessionOfCall,
  speech,
  sse,
  startCarrierGateway,
} from './carrier-setup.js'

t.setTimeout(300_000)
const CALLS = 20
const onServer = process.env.DATABASE_URL !== undefined
// One run is enough: the server half of the suite runs it (its database server is its own either way).
const skip = !onServer
  ? 'runs in the server half of the suite'
  : toolSkip(postgresBinDir() === undefined ? 'needs PostgreSQL binaries' : false)

t.test(`Postgres restarted during ${CALLS} live calls: no call drops, every finished turn is stored`, { skip }, async (t) => {
  const cluster = await startPgCluster()
  const db = await testDb(cluster.url)
  const transcripts: string[] = []
  const deepgram = await startFakeDeepgram({ apiKey: 'dg-key', script: transcriptsInTurn(transcripts) })
  const elevenlabs = await startFakeElevenLabs({ apiKey: 'el-key', msPerChar: 20, chunkMs: 100, chunkIntervalMs: 0 })
  const vendors = {
    STT_VENDOR_A_URL: deepgram.url,
    STT_VENDOR_A_API_KEY: 'dg-key',
    TTS_VENDOR_A_URL: elevenlabs.url,
    TTS_VENDOR_A_API_KEY: 'el-key',
  }
  const setup = await startCarrierGateway(vendors, undefined, db)
  const gw = await spawnGateway({
    ...vendors,
    DATABASE_URL: db.options.databaseUrl as string,
    PUBLIC_URL,
    ADMIN_TOKEN: '',
    ALLOW_INSECURE_WEBHOOKS: '1',
  })
  const calls: { callSid: string; call: SimulatedCall }[] = []
  t.teardown(async () => {
    for (const { call } of calls) await call.hangup().catch(() => undefined)
    await gw.kill()
    await setup.gw.close().catch(() => undefined)
    await deepgram.close()
    await elevenlabs.close()
    // The cluster (and the database in it) goes as a whole.
    await db.store.close().catch(() => undefined)
    cluster.destroy()
  })

  const { tenant, backend } = await newBackendTenant(t, setup, 'outage-token')
  backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello.' : 'We open at nine.')
  for (let i = 0; i < CALLS * 4; i++) transcripts.push('what are your opening hours')

  const wsBase = gw.url.replace(/^http/, 'ws')
  const toChild = (url: string) => url.replace(PUBLIC_URL, gw.url).replace(PUBLIC_URL.replace(/^https/, 'wss'), wsBase)
  const call = () =>
    placeCall({
      voiceHookUrl: toChild(setup.hookUrl),
      publicUrl: setup.hookUrl,
      rewriteUrl: toChild,
      authToken: tenant.authToken,
      from: '+442071838750',
      to: tenant.number,
      callSid: newCallSid(),
      realtime: true,
      silenceWhenIdle: true,
      playbackSpeed: 4,
    })
  for (let i = 0; i < CALLS; i++) {
    const r = await call()
    if (r.outcome !== 'connected') throw new Error(`call ${i} not connected: ${JSON.stringify(r)}`)
    calls.push({ callSid: r.call.callSid, call: r.call })
  }
  const store = setup.gw.store.db
  const rows = await Promise.all(calls.map(({ callSid }) => eventually(async () => sessionOfCall(setup, callSid), 20_000)))
  const ids = rows.map((r) => r.id)
  const finishedTurns = () => finishedTurnsOf(store, ids)
  const everyCallHas = (n: number) =>
    eventually(async () => {
      const done = await finishedTurns().catch(() => [])
      return done.length === CALLS && done.every((d) => d.n === n) ? done : undefined
    }, 60_000)
  // The child's own count of answered turns: /metrics needs no database.
  const answeredTurns = async () => {
    const r = await fetch(`${gw.url}/metrics`)
    return parseScrape(await r.text()).value('voxgate_turn_latency_seconds_count') ?? 0
  }
  const talk = () => Promise.all(calls.map(({ call }) => call.sendAudio(speech('two-phrases.wav'))))

  await talk()
  await everyCallHas(1)
  t.pass('every call finished a turn before the outage')

  // The outage: a fast shutdown terminates every connection, then nothing listens on the port.
  cluster.stop()
  const downAt = Date.now()
  const ready = await eventually(async () => {
    const r = await fetch(`${gw.url}/readyz`)
    return r.status === 503 ? r : undefined
  })
  t.match(await ready.json(), { code: 'database_unavailable' }, '/readyz says the database is unavailable')
  const refused = await fetch(`${gw.url}/v1/agents/web/authorize_session`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: tenant.agentId }),
  })
  t.equal(refused.status, 503, 'a new browser session is refused with 503')
  t.match(await refused.json(), { code: 'database_unavailable' })
  t.ok(refused.headers.get('retry-after'), 'with Retry-After')
  const newCall = await call()
  t.equal(newCall.outcome, 'http_error', 'a new phone call is refused')
  if (newCall.outcome === 'http_error') t.equal(newCall.status, 503, 'with 503 (a carrier retries it)')

  // A whole turn while the database is down: heard by every caller, counted by the gateway.
  await talk()
  await eventually(async () => ((await answeredTurns()) === CALLS * 2 ? true : undefined), 60_000)
  t.pass(`every call finished a second turn with the database down (${Date.now() - downAt} ms into the outage)`)
  const liveDuring = calls.filter(({ call }) => call.isOpen)
  t.equal(liveDuring.length, CALLS, 'no call dropped during the outage')

  cluster.start()
  t.comment(`database down for ${Date.now() - downAt} ms`)
  await eventually(async () => ((await fetch(`${gw.url}/readyz`)).status === 200 ? true : undefined), 30_000)
  t.pass('/readyz is ready again')

  await talk()
  const stored = await everyCallHas(3)
  t.equal(stored.length, CALLS, 'every call has its three finished turns stored, the outage one included')
  // Nothing lost and nothing twice: each transcript is the welcome and three turns, numbered without a gap.
  const entries = await store
    .selectFrom('transcript_entries')
    .select(['session_id', 'seq'])
    .where('session_id', 'in', ids)
    .orderBy('seq')
    .execute()
  for (const id of ids) {
    t.same(
      entries.filter((e) => e.session_id === id).map((e) => e.seq),
      [1, 2, 3, 4],
      `${id}: welcome and three turns, in order`,
    )
  }

  for (const { call } of calls) await call.hangup()
  const ended = await eventually(async () => {
    const r = await store.selectFrom('sessions').select(['id', 'status', 'end_reason']).where('id', 'in', ids).execute()
    return r.every((s) => s.status === 'ended') ? r : undefined
  }, 30_000)
  t.ok(
    ended.every((s) => s.end_reason === 'caller_hangup'),
    'every call ended when its caller hung up',
  )
  t.equal(gw.proc.exitCode, null, 'the gateway process is still running')
})
