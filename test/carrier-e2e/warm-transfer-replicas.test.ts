/**
 * Warm transfer behind a balancer: three gateway processes on one Postgres server behind nginx round-robin (no sticky
 * routing). The caller and the human's leg (its media stream and every callback about it) both go through nginx,
 * which spreads them as it spreads everything. So that each case tests the relay and not luck, the test turns the
 * rotation before the leg's requests (GET /healthz through nginx, its access log saying where each went) so the
 * leg's stream lands on a replica that does NOT run the session, and checks in the access log that it did; that
 * replica relays the stream and the callbacks to the one that does. Accept (tones both ways), decline, the caller
 * hanging up while the human rings, the relaying replica draining while bridged, and the session's replica
 * draining while bridged (the bridge goes on through the grace period, then the call ends `shutdown`).
 */
import t, { type Test } from 'tap'
import { toolSkip } from '../helpers/tool-required.js'
import { postSignedForm } from '../fakes/carrier/sign.js'
import { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'
import type { FakeCall } from '../fakes/carrier/fake-call.js'
import { newCallSid, placeCall, type SimulatedCall } from '../fakes/carrier/phone-simulator.js'
import { type ChildGateway, spawnGateway } from '../helpers/spawn-gateway.js'
import { freePort, hasNginx, startNginx } from '../helpers/nginx.js'
import { decodeMulaw, encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { toneFrames } from '../helpers/tones.js'
import { eventually, newBackendTenant, sessionOfCall, sse, startVoiceWorld } from './carrier-setup.js'

const onServer = process.env.DATABASE_URL !== undefined
const skip = !onServer
  ? 'needs DATABASE_URL: replicas share one Postgres server'
  : toolSkip(hasNginx() ? false : 'needs nginx (/usr/sbin/nginx)')
t.setTimeout(240_000)

const HUMAN = '+14155550100'
const CALLER = '+442071838750'
const TOKEN = 'warm-transfer-replicas-token'
const GRACE_MS = 4_000
const ANSWER = { kind: 'answer', realtime: true, silenceWhenIdle: true, playbackSpeed: 4 } as const

/** A tone as a phone sends it (mu-law 8 kHz). */
function tone(hz: number, ms: number): Buffer {
  const n = (8000 * ms) / 1000
  const pcm = new Int16Array(n)
  for (let i = 0; i < n; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / 8000))
  return Buffer.from(encodeMulaw(pcm))
}
const heard = (audio: Buffer, hz: number) => toneFrames(decodeMulaw(audio, new Int16Array(audio.length)), hz, 8000)

t.test('a warm transfer whose leg lands on the other replica', { skip }, async (t) => {
  const port = await freePort()
  const publicUrl = `http://127.0.0.1:${port}`
  const { c, deepgram, elevenlabs } = await startVoiceWorld(t, { PUBLIC_URL: publicUrl })
  const env = {
    DATABASE_URL: c.gw.db.options.databaseUrl!,
    PUBLIC_URL: publicUrl,
    ADMIN_TOKEN: '',
    ALLOW_INSECURE_WEBHOOKS: '1',
    SHUTDOWN_GRACE_MS: String(GRACE_MS),
    STT_VENDOR_A_URL: deepgram.url,
    STT_VENDOR_A_API_KEY: 'dg-key',
    TTS_VENDOR_A_URL: elevenlabs.url,
    TTS_VENDOR_A_API_KEY: 'el-key',
  }
  // Three: after one drains, two are left for the next case.
  const replicas = await Promise.all([spawnGateway(env), spawnGateway(env), spawnGateway(env)])
  for (const r of replicas) t.teardown(() => r.kill('SIGKILL'))
  const hostOf = (r: ChildGateway) => new URL(r.url).host
  const alive = (r: ChildGateway) => r.proc.exitCode === null && r.proc.signalCode === null
  // nginx in front of the live replicas, in this order (its rotation's); restarted on the same port after one exits.
  let upstreams = replicas.map(hostOf)
  let lb = await startNginx(port, upstreams)
  t.teardown(() => lb.close())
  async function rebalance(): Promise<void> {
    await lb.close()
    upstreams = replicas.filter(alive).map(hostOf)
    lb = await startNginx(port, upstreams)
  }

  /**
   * Turns nginx's rotation so that the `ahead`-th request from now reaches `target`: one worker, equal weights and
   * no failed upstream make it a strict rotation in `upstreams` order, so a probe's upstream (in the access log)
   * says where the next ones go.
   */
  async function steer(target: ChildGateway, ahead: number): Promise<void> {
    for (let probe = 0; probe <= upstreams.length; probe++) {
      const before = lb.accessLog().filter((l) => l.uri === '/healthz').length
      await (await fetch(`${publicUrl}/healthz`)).text()
      const last = await eventually(async () => lb.accessLog().filter((l) => l.uri === '/healthz')[before])
      const at = upstreams.indexOf(last.upstream)
      if (upstreams[(at + ahead) % upstreams.length] === hostOf(target)) return
    }
    throw new Error(`nginx's rotation did not come round to ${target.url}`)
  }

  /** The replica nginx passed the leg's media stream (`tl_` in its path) to, once the stream closed. */
  async function legStreamReplica(from: number): Promise<string> {
    const line = await eventually(
      async () =>
        lb
          .accessLog()
          .slice(from)
          .find((l) => l.uri.includes('/tl_')),
      10_000,
    )
    return line.upstream
  }

  const api = await FakeCallsApi.start({ authToken: TOKEN, stepMs: 5 })
  t.teardown(() => api.close())
  api.outcome = { kind: 'manual' }
  const { tenant, backend } = await newBackendTenant(t, c, TOKEN, undefined, api)

  function script(fields: Record<string, unknown>, failedLine = 'unexpected'): void {
    backend.reply = (req) => {
      const turnId = req.json.turn_id as string
      if (req.json.type === 'session.start') {
        return { kind: 'sse', steps: [{ data: { type: 'response.transfer', turn_id: turnId, mode: 'warm', to: HUMAN, ...fields } }] }
      }
      return sse(turnId, req.json.type === 'transfer.failed' ? failedLine : 'ok')
    }
  }

  /** A caller through nginx whose agent dials the human; `other` is a live replica that does not run the session. */
  async function callAndHuman(t: Test) {
    const dialled = api.nextCall()
    const callSid = newCallSid()
    const r = await placeCall({
      voiceHookUrl: `${publicUrl}/v1/agents/carrier/twiml`,
      authToken: TOKEN,
      from: CALLER,
      to: tenant.number,
      callSid,
      realtime: true,
      silenceWhenIdle: true,
      playbackSpeed: 4,
    })
    if (r.outcome !== 'connected') throw new Error(`call not connected: ${JSON.stringify(r)}`)
    api.addInbound(callSid, r.call)
    const human = await dialled
    const row = await eventually(async () => {
      const s = await sessionOfCall(c, callSid)
      return s?.status === 'connected' ? s : undefined
    })
    const owner = replicas.find((x) => x.leaseOwner === row.lease_owner)
    const other = replicas.find((x) => x !== owner && alive(x))
    t.ok(owner !== undefined && other !== undefined, 'the session runs on a replica behind the balancer')
    if (owner === undefined || other === undefined) throw new Error('no owner')
    return { callSid, caller: r.call, human, row, owner, other, logFrom: lb.accessLog().length }
  }

  async function endedRow(callSid: string, timeoutMs = 15_000) {
    return eventually(async () => {
      const s = await sessionOfCall(c, callSid)
      return s?.status === 'ended' ? s : undefined
    }, timeoutMs)
  }

  /**
   * Answers the human's leg through nginx: the initiated and ringing callbacks it asked for, then the stream, which
   * the rotation brings to `to`.
   */
  async function answer(human: FakeCall, to: ChildGateway): Promise<SimulatedCall> {
    const callbacksFirst = ['initiated', 'ringing'].filter((e) => human.params.statusCallbackEvents.includes(e)).length
    await steer(to, callbacksFirst + 1)
    void human.drive(ANSWER)
    const leg = await eventually(async () => (human.phone?.outcome === 'connected' ? human.phone.call : undefined))
    return leg
  }

  /** Tones cross the bridge both ways. */
  async function bridged(t: Test, caller: SimulatedCall, leg: SimulatedCall, what: string): Promise<void> {
    const callerFrom = caller.receivedAudio().length
    const humanFrom = leg.receivedAudio().length
    void caller.sendAudio(tone(440, 400))
    void leg.sendAudio(tone(1000, 400))
    await leg.waitFor(() => heard(leg.receivedAudio().subarray(humanFrom), 440) >= 10, 5000)
    await caller.waitFor(() => heard(caller.receivedAudio().subarray(callerFrom), 1000) >= 10, 5000)
    t.pass(`${what}: the caller's 440 Hz reached the human and the human's 1 kHz the caller`)
  }

  await t.test('accepted with 1: the leg relayed to the session, tones cross, callbacks answered', async (t) => {
    script({ whisper: 'A caller about a refund.', timeout_s: 20 })
    const { callSid, caller, human, other, logFrom } = await callAndHuman(t)
    const leg = await answer(human, other)
    await leg.waitFor(() => leg.marks.some((m) => m.name.startsWith('whisper') && m.echoedAt !== undefined), 8000)
    t.ok(heard(leg.receivedAudio(), 440) >= 60, 'the human heard the whisper through the relay')
    leg.sendDtmf('1')
    await bridged(t, caller, leg, 'accepted')
    await leg.hangup()
    const row = await endedRow(callSid)
    t.equal(row.end_reason, 'transfer_human_hangup')
    await human.done
    t.equal(await legStreamReplica(logFrom), hostOf(other), "nginx passed the leg's stream to a replica that does not run the session")
    t.ok(human.callbacks.length >= 3, 'the leg had its status callbacks')
    t.ok(
      human.callbacks.every((cb) => cb.reply === 204),
      `each callback, posted through nginx to whichever replica, was answered (${human.callbacks.map((cb) => `${cb.callStatus}: ${cb.reply}`).join(', ')})`,
    )
  })

  await t.test('declined with 2: the caller is back with the agent', async (t) => {
    backend.requests.length = 0
    script({ whisper: 'A caller.', timeout_s: 20 }, 'Nobody is free right now.')
    const { caller, human, other, logFrom } = await callAndHuman(t)
    const leg = await answer(human, other)
    await leg.waitFor(() => leg.marks.some((m) => m.name.startsWith('whisper') && m.echoedAt !== undefined), 8000)
    leg.sendDtmf('2')
    const failed = await eventually(async () => backend.requests.find((r) => r.json.type === 'transfer.failed'))
    t.equal(failed.json.reason, 'declined')
    t.equal(await human.done, 'completed', "the human's leg ended")
    t.equal(await legStreamReplica(logFrom), hostOf(other), "the leg's stream had gone to the other replica")
    t.ok(caller.isOpen, 'the call goes on with the agent')
    await caller.hangup()
  })

  await t.test('the caller hangs up while the human rings: the leg is cancelled', async (t) => {
    script({ timeout_s: 20 })
    const { callSid, caller, human, other } = await callAndHuman(t)
    const statusUrl = human.params.statusCallback ?? ''
    const callbackPath = new URL(statusUrl).pathname
    const callbacks = () => lb.accessLog().filter((l) => l.method === 'POST' && l.uri === callbackPath)
    // The upstream of the next callback logged after `seen` (nginx logs a request once its answer is sent, so the
    // line may come a moment after the poster got its answer: an earlier callback's line must not be taken for it).
    const nextCallback = (seen: number) => eventually(async () => callbacks()[seen]?.upstream)
    await steer(other, 1)
    const beforeRinging = callbacks().length
    await human.progress('ringing')
    t.equal(human.callbacks.at(-1)?.reply, 204, 'the ringing callback, posted through nginx, was answered')
    t.equal(await nextCallback(beforeRinging), hostOf(other), 'by way of a replica that does not run the session')
    await steer(other, 1)
    const beforeForged = callbacks().length
    const forged = await postSignedForm({
      postTo: statusUrl,
      signedUrl: statusUrl,
      form: { AccountSid: api.accountSid, CallSid: human.sid, CallStatus: 'busy' },
      authToken: 'not-the-token',
    })
    t.equal(forged.status, 403, "a forged callback posted there is relayed and refused by the session's replica")
    t.equal(await nextCallback(beforeForged), hostOf(other), 'it too reached the other replica first')
    await caller.hangup()
    t.equal(await human.done, 'canceled', 'the human leg was cancelled through the Calls API')
    const row = await endedRow(callSid)
    t.equal(row.end_reason, 'caller_hangup')
  })

  await t.test('the relaying replica drains while bridged: the relay lasts its grace period, then the human leg ends', async (t) => {
    script({ accept: 'none', timeout_s: 20 })
    const { callSid, caller, human, other, logFrom } = await callAndHuman(t)
    const leg = await answer(human, other)
    await bridged(t, caller, leg, 'before the drain')
    const drainedAt = Date.now()
    void other.kill('SIGTERM')
    await new Promise((r) => setTimeout(r, 500))
    await bridged(t, caller, leg, 'while the relaying replica drains')
    await leg.ended
    const after = Date.now() - drainedAt
    t.ok(after >= GRACE_MS - 500, `the relay lasted the grace period (${after} ms after SIGTERM)`)
    const row = await endedRow(callSid)
    t.equal(row.end_reason, 'transfer_human_hangup', "the session's replica ended the call as the human's leg ended")
    t.equal((await caller.ended).by, 'server')
    t.equal(await legStreamReplica(logFrom), hostOf(other), 'the relaying replica was the one that drained')
    await other.exited
    // A strict rotation again: nginx over the two replicas left.
    await rebalance()
  })

  await t.test("the session's replica drains while bridged: the bridge lasts the grace period, then ends shutdown", async (t) => {
    script({ accept: 'none', timeout_s: 20 })
    const { callSid, caller, human, owner, other, logFrom } = await callAndHuman(t)
    const leg = await answer(human, other)
    await bridged(t, caller, leg, 'before the drain')
    const drainedAt = Date.now()
    void owner.kill('SIGTERM')
    await new Promise((r) => setTimeout(r, 500))
    await bridged(t, caller, leg, 'while the replica drains')
    const end = await caller.ended
    const after = Date.now() - drainedAt
    t.ok(after >= GRACE_MS - 500, `the call lasted the grace period (${after} ms after SIGTERM)`)
    t.equal(end.by, 'server', 'then the gateway ended it')
    t.equal(await human.done, 'completed', "and the human's leg")
    const row = await endedRow(callSid)
    t.equal(row.end_reason, 'shutdown', 'the end says why (session.end carries it)')
    t.equal(await legStreamReplica(logFrom), hostOf(other), "the human's stream was relayed by the replica that stayed")
  })
})
