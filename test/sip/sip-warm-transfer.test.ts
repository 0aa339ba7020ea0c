/**
 * Warm transfer of a SIP caller, end to end over real sockets: a test phone (SIP and RTP over
 * UDP) calls the gateway through the organization's trunk; the backend answers the welcome with `response.transfer`
 * `mode: "warm"`; the gateway dials the human through the organization's outbound trunk (the fake SIP trunk, with
 * its digest challenge), holds the caller (the hold line, then hold audio), whispers to the human only, and on the
 * human's RFC 4733 "1" bridges the two RTP streams (tones measured both ways). A decline ("2"), a 480 and the
 * transfer's timeout (CANCEL) bring the caller back to the agent with `transfer.failed`; either side hanging up ends
 * both; a cold transfer of a caller whose `Allow` lacks REFER is bridged by the gateway. Every wait is on an event.
 */
import t, { type Test } from 'tap'
import wavefile from 'wavefile'
import { decodeAlaw } from '../../pipeline/audio/g711-alaw.js'
import { decodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { getHeader } from '../../transports/sip/message/sip-message.js'
import type { BackendReply } from '../fakes/backend/fake-backend.js'
import { FakeSipTrunk } from '../fakes/sip-trunk/fake-sip-trunk.js'
import { SipCaller } from '../helpers/sip-caller.js'
import { toneFrames } from '../helpers/tones.js'
import { eventually, newBackendTenant, sse } from '../carrier-e2e/carrier-setup.js'
import { tone } from '../transfer/bridge-audio-helpers.js'
import { startSipWorld } from './sip-setup.js'

const HUMAN = '+14155550100'
/** The test phone's number (its From). */
const CALLER = '+442071838750'
/** What a phone that takes no REFER lists. */
const NO_REFER = 'Allow: INVITE, ACK, BYE, CANCEL, OPTIONS'

const { c, sipPort } = await startSipWorld(t)
const gateway = { host: '127.0.0.1', port: sipPort }
const { tenant, backend } = await newBackendTenant(t, c, 'sip-warm-token')
const credentials = { username: 'voxgate', password: 'trunk-secret' }
const trunk = await FakeSipTrunk.start(credentials)
t.teardown(() => trunk.close())
let trunkId = ''
{
  const events = ['transfer.started', 'transfer.answered', 'transfer.connected', 'transfer.failed']
  const agent = (await c.gw.request('GET', `/v1/agents/${tenant.agentId}`, { key: tenant.apiKey })).body
  const config = { ...agent.config, session_webhook: { url: `${backend.url}/lifecycle`, events } }
  const r = await c.gw.request('POST', `/v1/agents/${tenant.agentId}`, { key: tenant.apiKey, body: { config } })
  if (r.status !== 200) throw new Error(r.text)
  const org = await c.gw.request('PATCH', `/admin/v1/organizations/${tenant.orgId}`, { admin: true, body: { recording_enabled: true } })
  if (org.status !== 200) throw new Error(org.text)
  // One trunk both ways: the PBX's calls come in from 127.0.0.1, the human is dialled out through the fake trunk.
  const made = await c.gw.request('POST', '/v1/sip/trunks', {
    key: tenant.apiKey,
    body: { name: 'pbx', inbound: { allowed_cidrs: ['127.0.0.1'] }, outbound: { uri: trunk.uri, ...credentials } },
  })
  if (made.status !== 201) throw new Error(made.text)
  trunkId = made.body.id as string
}

/** Agent webhook requests (not the lifecycle webhooks) of `type`. */
function agentRequests(type: string) {
  return backend.requests.filter((r) => r.json.type === type && !r.path.endsWith('/lifecycle'))
}

/** Lifecycle webhooks of the session `sessionId`, in arrival order. */
function lifecycle(sessionId: string) {
  return backend.requests.filter((r) => r.path.endsWith('/lifecycle') && r.json.session_id === sessionId).map((r) => r.json)
}

/** The welcome asks for a transfer (`fields` complete it); `transfer.failed` is answered with `failedLine`. */
function script(fields: Record<string, unknown>, failedLine = 'The line is busy, how else can I help?'): void {
  backend.reply = (req): BackendReply => {
    const turnId = req.json.turn_id as string
    if (req.path.endsWith('/lifecycle')) return { kind: 'json', body: {} }
    if (req.json.type === 'session.start') {
      return { kind: 'sse', steps: [{ data: { type: 'response.transfer', turn_id: turnId, to: HUMAN, ...fields } }] }
    }
    if (req.json.type === 'transfer.failed') return sse(turnId, failedLine)
    return sse(turnId, 'ok')
  }
}

/** A connected call from the test phone (its INVITE carrying `extra`), closed at the end of the test. */
async function call(t: Test, extra: string[] = [NO_REFER]): Promise<SipCaller> {
  const p = await SipCaller.open(gateway)
  t.teardown(() => p.close())
  p.invite(tenant.number, { extra })
  const ok = await p.final()
  if (ok.status !== 200) throw new Error(`${ok.status} ${ok.reason}`)
  p.ack(ok)
  return p
}

const seen = new Set<string>()
/** The session of the call just connected (the tenant's newest not seen before; the calls follow each other). */
async function sessionOf(_p: SipCaller) {
  const row = await eventually(async () => {
    const rows = await c.gw.store.db.selectFrom('sessions').selectAll().where('organization_id', '=', tenant.orgId).execute()
    return rows.find((r) => !seen.has(r.id))
  })
  seen.add(row.id)
  return row
}

/** The human leg's INVITE that carried credentials (after the trunk's 407), newer than `after` requests. */
async function humanInvite(after: number) {
  return eventually(async () =>
    trunk.log.slice(after).find((r) => r.method === 'INVITE' && getHeader(r, 'Proxy-Authorization') !== undefined),
  )
}

/** PCM16 of what the phone heard (PCMU packets) from packet `from` on. */
function callerHeard(p: SipCaller, from = 0): Int16Array {
  return decodeMulaw(
    Buffer.concat(
      p.heard
        .slice(from)
        .filter((h) => h.payloadType === 0)
        .map((h) => h.payload),
    ),
  )
}

/** PCM16 of what the human heard (PCMU or PCMA packets) from packet `from` on. */
function humanHeard(from = 0): Int16Array {
  const audio = trunk.heard.slice(from).filter((h) => h.payloadType === 0 || h.payloadType === 8)
  const pcm = audio.map((h) => (h.payloadType === 8 ? decodeAlaw(h.payload) : decodeMulaw(h.payload)))
  const out = new Int16Array(pcm.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of pcm) {
    out.set(p, at)
    at += p.length
  }
  return out
}

const ended = (id: string) =>
  eventually(async () => {
    const row = await c.gw.store.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
    return row.status === 'ended' ? row : undefined
  }, 5_000)

t.test('a SIP caller is handed to a human: hold line and hold audio, whisper to the human only, "1", tones both ways', async (t) => {
  // The fake TTS speaks a 440 Hz tone, 20 ms a character: "Please hold." is 12 frames, the whisper and prompt 68.
  script({ mode: 'warm', whisper: 'A caller about a refund.', hold: 'Please hold.', timeout_s: 20 })
  const before = trunk.log.length
  const humanFrom = trunk.heard.length
  const p = await call(t)
  const row = await sessionOf(p)
  const invite = await humanInvite(before)
  t.equal(invite.uri, `sip:${HUMAN}@127.0.0.1:${trunk.sip.address().port}`, 'the human is dialled through the trunk')
  t.match(getHeader(invite, 'From'), `<sip:${CALLER}@`, "the caller's number is the leg's caller id")
  t.match(getHeader(invite, 'Proxy-Authorization'), /^Digest username="voxgate"/, 'digest after the 407')
  await eventually(async () => (toneFrames(humanHeard(humanFrom), 440) >= 60 ? true : undefined), 8_000, 'the whisper at the human')
  const rows = await c.gw.store.db.selectFrom('sessions').select('id').where('organization_id', '=', tenant.orgId).execute()
  t.same(
    rows.filter((r) => !seen.has(r.id)),
    [],
    'the answered human leg has no session of its own (no admission, no row)',
  )
  const held = callerHeard(p)
  const line = toneFrames(held, 440)
  t.ok(line >= 8 && line <= 16, `the caller heard the hold line and not the whisper (${line} frames of 440 Hz)`)
  t.ok(toneFrames(held, 784) >= 2, `and the hold audio's chime (${toneFrames(held, 784)} frames of 784 Hz)`)
  t.equal(agentRequests('transfer.failed').length, 0)

  trunk.digit('1')
  await eventually(async () => lifecycle(row.id).find((e) => e.type === 'transfer.connected'), 5_000, 'transfer.connected')
  const callerFrom = p.heard.length
  const humanBridged = trunk.heard.length
  trunk.play(Buffer.from(tone('ulaw_8000', 1000, 1000)))
  void p.speak(Buffer.from(tone('ulaw_8000', 600, 1000)))
  await eventually(async () => (toneFrames(callerHeard(p, callerFrom), 1000) >= 20 ? true : undefined), 5_000, "the human's tone")
  await eventually(async () => (toneFrames(humanHeard(humanBridged), 600) >= 20 ? true : undefined), 5_000, "the caller's tone")
  t.pass('1 kHz from the human reached the caller, 600 Hz from the caller reached the human')
  t.equal(toneFrames(callerHeard(p, callerFrom), 784), 0, 'the hold audio stopped')

  const humanCallId = getHeader(invite, 'Call-ID') ?? ''
  trunk.hangUp(humanCallId)
  const bye = await p.byes.next(5_000, 'the BYE to the caller')
  t.equal(getHeader(bye, 'Call-ID'), p.callId, "the human's hang-up ends the caller's call")
  const done = await ended(row.id)
  t.equal(done.end_reason, 'transfer_human_hangup')
  const details = await eventually(async () => {
    const d = await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}`, { key: tenant.apiKey })
    return d.body.recording_status === 'completed' ? d.body : undefined
  })
  // The recording keeps both parties: the caller's tone on the left, the human's (what the caller heard) on the right.
  const res = await fetch(`${c.gw.url}/v1/agents/${tenant.agentId}/sessions/${row.id}/recording`, {
    headers: { authorization: `Bearer ${tenant.apiKey}` },
  })
  const wav = new wavefile.WaveFile(Buffer.from(await res.arrayBuffer()))
  const [left, right] = wav.getSamples(false, Int16Array) as unknown as [Int16Array, Int16Array]
  t.ok(toneFrames(left, 600) >= 10, `the caller's tone on the caller's channel (${toneFrames(left, 600)} frames)`)
  t.ok(toneFrames(right, 1000) >= 10, `the human's tone on the channel of what the caller heard (${toneFrames(right, 1000)} frames)`)
  t.match(details.transfers, [{ mode: 'warm', to: HUMAN, answered_after_ms: Number, connected_after_ms: Number }])
  t.equal(details.transfers[0].failed_reason, undefined)
  t.match(
    lifecycle(row.id).map((e) => e.type),
    ['transfer.started', 'transfer.answered', 'transfer.connected'],
    'the lifecycle webhooks',
  )
  t.match(await (await fetch(`${c.gw.url}/metrics`)).text(), /^voxgate_warm_transfers_total\{outcome="connected"\} 1$/m, 'counted')
  t.equal(agentRequests('transfer.failed').length, 0, 'no transfer.failed')
  await eventually(async () => (c.gw.gateway.sip?.liveCalls === 0 ? true : undefined))
})

t.test('a whisper longer than one piece of the pacer, then "2": the leg gets a BYE, the caller is back with the agent', async (t) => {
  // 256 characters and the prompt: 300 frames of the fake speech, fed to the human's pacer in pieces of 250.
  const whisper = 'A caller about a refund of an order that arrived damaged. '.repeat(5).slice(0, 256)
  script({ mode: 'warm', whisper, timeout_s: 20 }, 'Nobody can take the call now.')
  const before = trunk.log.length
  const asked = agentRequests('transfer.failed').length
  const p = await call(t)
  const row = await sessionOf(p)
  const invite = await humanInvite(before)
  const humanFrom = trunk.heard.length
  await eventually(async () => (toneFrames(humanHeard(humanFrom), 440) >= 280 ? true : undefined), 12_000, 'the whole whisper')
  const callerFrom = p.heard.length
  trunk.digit('2')
  const failed = await eventually(async () => agentRequests('transfer.failed')[asked], 5_000)
  t.match(failed.json, { type: 'transfer.failed', reason: 'declined', to: HUMAN })
  const bye = await eventually(async () =>
    trunk.log.find((r) => r.method === 'BYE' && getHeader(r, 'Call-ID') === getHeader(invite, 'Call-ID')),
  )
  t.ok(bye, "the human's leg was hung up")
  // The agent's reply (29 characters of the fake TTS's 440 Hz) reaches the caller.
  await eventually(async () => (toneFrames(callerHeard(p, callerFrom), 440) >= 20 ? true : undefined), 5_000, "the agent's reply")
  t.pass('the caller hears the agent again')
  t.match(await (await fetch(`${c.gw.url}/metrics`)).text(), /^voxgate_warm_transfers_total\{outcome="declined"\} 1$/m)
  p.bye()
  t.equal((await ended(row.id)).end_reason, 'caller_hangup')
})

t.test('a 480 fails no_answer, a busy 486 busy; the agent is told each time', async (t) => {
  for (const [mode, reason] of [
    ['unavailable', 'no_answer'],
    ['busy', 'busy'],
  ] as const) {
    trunk.mode = mode
    script({ mode: 'warm', timeout_s: 20 })
    const asked = agentRequests('transfer.failed').length
    const p = await call(t)
    const row = await sessionOf(p)
    const failed = await eventually(async () => agentRequests('transfer.failed')[asked], 5_000)
    t.match(failed.json, { reason, to: HUMAN }, `${mode}: ${reason}`)
    p.bye()
    t.equal((await ended(row.id)).end_reason, 'caller_hangup')
  }
  trunk.mode = 'answer'
})

t.test('an organization without an outbound trunk: transfer.failed failed, nothing dialled', async (t) => {
  const patch = (outbound: unknown) => c.gw.request('PATCH', `/v1/sip/trunks/${trunkId}`, { key: tenant.apiKey, body: { outbound } })
  t.equal((await patch(null)).status, 200)
  t.teardown(() => patch({ uri: trunk.uri, ...credentials }))
  script({ mode: 'warm', timeout_s: 20 })
  const before = trunk.log.length
  const asked = agentRequests('transfer.failed').length
  const p = await call(t)
  const row = await sessionOf(p)
  const failed = await eventually(async () => agentRequests('transfer.failed')[asked], 5_000)
  t.match(failed.json, { reason: 'failed', to: HUMAN })
  t.equal(trunk.log.length, before, 'no INVITE went out')
  p.bye()
  t.equal((await ended(row.id)).end_reason, 'caller_hangup')
})

t.test('nobody answers within timeout_s: CANCEL to the trunk, transfer.failed timeout', async (t) => {
  trunk.mode = 'never'
  t.teardown(() => {
    trunk.mode = 'answer'
  })
  script({ mode: 'warm', timeout_s: 5 })
  const before = trunk.log.length
  const asked = agentRequests('transfer.failed').length
  const p = await call(t)
  const row = await sessionOf(p)
  const invite = await humanInvite(before)
  const failed = await eventually(async () => agentRequests('transfer.failed')[asked], 15_000, 'transfer.failed after timeout_s')
  t.match(failed.json, { reason: 'timeout', to: HUMAN })
  const cancel = await eventually(async () =>
    trunk.log.find((r) => r.method === 'CANCEL' && getHeader(r, 'Call-ID') === getHeader(invite, 'Call-ID')),
  )
  t.ok(cancel, 'the ringing leg was CANCELled')
  p.bye()
  t.equal((await ended(row.id)).end_reason, 'caller_hangup')
})

t.test('accept "none" bridges on answer; the caller hangs up and the human gets a BYE', async (t) => {
  script({ mode: 'warm', accept: 'none', timeout_s: 20 })
  const before = trunk.log.length
  const p = await call(t)
  const row = await sessionOf(p)
  const invite = await humanInvite(before)
  await eventually(async () => lifecycle(row.id).find((e) => e.type === 'transfer.connected'), 5_000, 'transfer.connected')
  p.bye()
  t.equal((await p.final()).status, 200)
  const bye = await eventually(async () =>
    trunk.log.find((r) => r.method === 'BYE' && getHeader(r, 'Call-ID') === getHeader(invite, 'Call-ID')),
  )
  t.ok(bye, 'the human got a BYE')
  t.equal((await ended(row.id)).end_reason, 'transfer_caller_hangup')
})

t.test('a sip: URI is a bridged target: the INVITE goes through the trunk with that Request-URI', async (t) => {
  script({ mode: 'warm', to: 'sip:desk@pbx.example.test', accept: 'none', timeout_s: 20 })
  const before = trunk.log.length
  const p = await call(t)
  const row = await sessionOf(p)
  const invite = await humanInvite(before)
  t.equal(invite.uri, 'sip:desk@pbx.example.test', 'the Request-URI is the target')
  t.equal(getHeader(invite, 'To'), '<sip:desk@pbx.example.test>', 'and the To')
  await eventually(async () => lifecycle(row.id).find((e) => e.type === 'transfer.connected'), 5_000, 'transfer.connected')
  p.bye()
  t.equal((await p.final()).status, 200)
  t.equal((await ended(row.id)).end_reason, 'transfer_caller_hangup')
})

t.test(
  'a cold transfer of a caller whose Allow lacks REFER is bridged by the gateway (PCMU caller, PCMA human); one with REFER is not',
  async (t) => {
    script({ content: 'Connecting you now.' })
    trunk.codec = 'PCMA'
    t.teardown(() => {
      trunk.codec = 'PCMU'
    })
    const before = trunk.log.length
    const humanFrom = trunk.heard.length
    const p = await call(t)
    const row = await sessionOf(p)
    const invite = await humanInvite(before)
    t.equal(invite.uri, `sip:${HUMAN}@127.0.0.1:${trunk.sip.address().port}`)
    await eventually(async () => lifecycle(row.id).find((e) => e.type === 'transfer.connected'), 5_000, 'bridged on answer')
    t.equal(toneFrames(humanHeard(humanFrom), 440), 0, 'no whisper: the human hears no agent voice')
    const callerFrom = p.heard.length
    const humanBridged = trunk.heard.length
    trunk.play(Buffer.from(tone('ulaw_8000', 1000, 600)))
    void p.speak(Buffer.from(tone('ulaw_8000', 600, 600)))
    await eventually(async () => (toneFrames(callerHeard(p, callerFrom), 1000) >= 10 ? true : undefined), 5_000, "the human's tone")
    await eventually(async () => (toneFrames(humanHeard(humanBridged), 600) >= 10 ? true : undefined), 5_000, "the caller's tone")
    t.ok(
      trunk.heard.slice(humanBridged).every((h) => h.payloadType !== 0),
      'the human heard PCMA only: the bridge was transcoded both ways',
    )
    trunk.hangUp(getHeader(invite, 'Call-ID') ?? '')
    await p.byes.next(5_000, 'the BYE to the caller')
    t.equal((await ended(row.id)).end_reason, 'transfer_human_hangup')

    const count = trunk.log.filter((r) => r.method === 'INVITE').length
    const refer = await call(t, ['Allow: INVITE, ACK, BYE, CANCEL, OPTIONS, REFER, NOTIFY'])
    const request = await refer.requests.next(5_000, 'a REFER to the peer that takes one')
    t.equal(request.method, 'REFER', 'a peer that takes REFER is transferred by REFER (not bridged)')
    t.equal(trunk.log.filter((r) => r.method === 'INVITE').length, count, 'and nothing was dialled')
    refer.bye()
  },
)
