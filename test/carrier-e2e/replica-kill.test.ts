/**
 * A replica killed with live phone calls (SIGKILL: no drain, no goodbye): the surviving replica's lease sweeper
 * ends every one of its calls (`lease_expired`) within about a lease period, frees their concurrency slots, sends
 * their `session.end`, and the turns finished before the kill are still stored. Real processes on one Postgres
 * server: the killed replica is a child process taking the calls through the carrier simulator.
 */
import t from 'tap'
import { placeCall, newCallSid, type SimulatedCall } from '../fakes/carrier/phone-simulator.js'
import { startFakeDeepgram, transcriptsInTurn } from '../fakes/deepgram/fake-deepgram.js'
import { startFakeElevenLabs } from '../fakes/elevenlabs/fake-elevenlabs.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { startWebhookReceiver } from '../helpers/webhook-receiver.js'
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

t.setTimeout(240_000)
const CALLS = 10
const LEASE_TTL = 3_000
const skip = process.env.DATABASE_URL === undefined ? 'needs DATABASE_URL: the killed replica is another process' : false

t.test(`SIGKILL of a replica carrying ${CALLS} calls: the survivor ends them, frees the slots, sends session.end`, { skip }, async (t) => {
  const transcripts: string[] = []
  const deepgram = await startFakeDeepgram({ apiKey: 'dg-key', script: transcriptsInTurn(transcripts) })
  t.teardown(() => deepgram.close())
  const elevenlabs = await startFakeElevenLabs({ apiKey: 'el-key', msPerChar: 20, chunkMs: 100, chunkIntervalMs: 0 })
  t.teardown(() => elevenlabs.close())
  const vendors = {
    STT_VENDOR_A_URL: deepgram.url,
    STT_VENDOR_A_API_KEY: 'dg-key',
    TTS_VENDOR_A_URL: elevenlabs.url,
    TTS_VENDOR_A_API_KEY: 'el-key',
    LEASE_TTL_MS: String(LEASE_TTL),
  }
  const survivor = await startCarrierGateway(vendors)
  t.teardown(() => survivor.gw.close())
  const doomed = await spawnGateway({
    ...vendors,
    DATABASE_URL: survivor.gw.db.options.databaseUrl as string,
    PUBLIC_URL,
    ADMIN_TOKEN: '',
    ALLOW_INSECURE_WEBHOOKS: '1',
  })
  t.teardown(() => doomed.kill())

  const receiver = await startWebhookReceiver()
  t.teardown(() => receiver.close())
  const { tenant, backend } = await newBackendTenant(t, survivor, 'kill-token', (config) => {
    config.session_webhook = { url: `${receiver.url}/lifecycle`, events: ['session.end'] }
  })
  backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello.' : 'We open at nine.')
  for (let i = 0; i < CALLS * 2; i++) transcripts.push('what are your opening hours')

  // Every call goes to the doomed replica (the carrier's URLs rewritten to it).
  const wsBase = doomed.url.replace(/^http/, 'ws')
  const toDoomed = (url: string) => url.replace(PUBLIC_URL, doomed.url).replace(PUBLIC_URL.replace(/^https/, 'wss'), wsBase)
  const calls: { callSid: string; call: SimulatedCall }[] = []
  for (let i = 0; i < CALLS; i++) {
    const callSid = newCallSid()
    const r = await placeCall({
      voiceHookUrl: toDoomed(survivor.hookUrl),
      publicUrl: survivor.hookUrl,
      rewriteUrl: toDoomed,
      authToken: tenant.authToken,
      from: '+442071838750',
      to: tenant.number,
      callSid,
      realtime: true,
      silenceWhenIdle: true,
      playbackSpeed: 4,
    })
    if (r.outcome !== 'connected') throw new Error(`call ${i} not connected: ${JSON.stringify(r)}`)
    calls.push({ callSid, call: r.call })
  }
  const db = survivor.gw.store.db
  const rows = await Promise.all(calls.map(({ callSid }) => eventually(async () => sessionOfCall(survivor, callSid), 20_000)))
  const ids = rows.map((r) => r.id)

  // Each caller says something and hears the answer: a finished turn per call, stored before the kill.
  const finishedTurns = () => finishedTurnsOf(db, ids)
  await Promise.all(calls.map(({ call }) => call.sendAudio(speech('two-phrases.wav'))))
  const before = await eventually(async () => {
    const done = await finishedTurns()
    return done.length === CALLS ? done : undefined
  }, 60_000)
  t.equal(before.length, CALLS, 'every call finished a turn on the doomed replica')
  const live = async () =>
    Number(
      (
        await db
          .selectFrom('sessions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('organization_id', '=', tenant.orgId)
          .where('status', '=', 'connected')
          .executeTakeFirstOrThrow()
      ).n,
    )
  t.equal(await live(), CALLS, `${CALLS} calls live on the doomed replica`)

  const killedAt = Date.now()
  await doomed.kill('SIGKILL')
  const ended = await eventually(async () => {
    const r = await db.selectFrom('sessions').select(['id', 'status', 'end_reason']).where('id', 'in', ids).execute()
    return r.every((s) => s.status === 'ended') ? r : undefined
  }, LEASE_TTL * 4)
  t.comment(`all ${CALLS} ended ${Date.now() - killedAt} ms after the kill (lease ${LEASE_TTL} ms)`)
  t.ok(
    ended.every((s) => s.end_reason === 'lease_expired'),
    'each ended as lease_expired',
  )
  t.equal(await live(), 0, 'their concurrency slots are free')
  for (const id of ids) {
    const end = await receiver.waitFor((r) => r.json?.type === 'session.end' && r.json.session_id === id, 15_000)
    t.equal(end.json.end_reason, 'lease_expired', `session.end for ${id}`)
  }
  const after = await finishedTurns()
  for (const b of before) {
    t.ok((after.find((a) => a.session_id === b.session_id)?.n ?? 0) >= b.n, `${b.session_id}: its finished turns are kept`)
  }
  for (const { call } of calls) await call.hangup().catch(() => undefined)
})
