/**
 * Inbound SIP calls from a real SIP phone (Debian's baresip, test/helpers/baresip.ts): its microphone a WAV file,
 * what it hears written to another. A caller from an allowed address hears the welcome, its keypad digits reach the
 * agent, it holds and resumes the call, and hanging up either way ends the session; a caller from another address
 * (127.0.0.2) is refused with 403 and leaves no session. The transaction edge cases are in the sipp and
 * test-phone files beside this one.
 */
import { readFileSync, statSync } from 'node:fs'
import { toolSkip } from '../helpers/tool-required.js'
import t, { type Test } from 'tap'
import { quietMicrophone, rms } from '../helpers/tones.js'
import wavefile from 'wavefile'
import { eventually, newBackendTenant, sse } from '../carrier-e2e/carrier-setup.js'
import { hasBaresip, type Phone, startPhone } from '../helpers/baresip.js'
import { addTrunk, startSipWorld } from './sip-setup.js'

const skip = toolSkip(
  hasBaresip() ? false : 'baresip is not installed (apt-get install baresip-core): the real-phone SIP tests are skipped',
)

const { microphone } = quietMicrophone(t, 'baresip-call-')

// Every address: baresip puts the machine's own address (not 127.0.0.1) in its SDP and sends RTP from it, and a
// socket bound to 127.0.0.1 cannot answer another address.
const world = await startSipWorld(t, { SIP_HOST: '0.0.0.0' })
const { c, sipPort } = world
const { tenant, backend } = await newBackendTenant(t, c, 'baresip-token')
const WELCOME = 'Hello, you reached the support line of the example company.'
backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? WELCOME : 'Noted.')
await addTrunk(world, tenant.apiKey, { allowed_cidrs: ['127.0.0.1/32'] })
const uri = `sip:${tenant.number}@127.0.0.1:${sipPort}`

async function phone(t: Test, address?: string): Promise<Phone> {
  const p = await startPhone({ microphone, ...(address === undefined ? {} : { address }) })
  t.teardown(() => p.close())
  return p
}

async function sessions() {
  return c.gw.store.db.selectFrom('sessions').selectAll().where('organization_id', '=', tenant.orgId).orderBy('created_at').execute()
}

/** How much the phone has heard so far: the size of its file of decoded audio. */
function heardBytes(p: Phone): number {
  const file = p.heard()
  return file === undefined ? 0 : statSync(file).size
}

t.test('a caller from the trunk hears the welcome, presses a key, holds, resumes and hangs up', { skip }, async (t) => {
  const p = await phone(t)
  await p.dial(uri)
  await p.waitFor('CALL_ESTABLISHED')
  const session = await eventually(async () => (await sessions()).find((r) => r.status === 'connected'), 5_000, 'a connected session')
  t.equal(session.channel, 'sip', 'a SIP session')
  t.equal(session.to_phone_number, tenant.number, 'for the dialled number')
  await eventually(async () => backend.requests.find((q) => q.json.type === 'session.start'), 5_000, 'session.start')
  // The phone hears the welcome before the caller does anything. The gateway sends no packets while it has nothing
  // to say (the RTP timestamps run on), and the phone writes what it receives: wait for half a second of it.
  await eventually(async () => (heardBytes(p) >= 8000 ? true : undefined), 10_000, 'half a second of audio heard').catch((e) => {
    throw new Error(`${String(e)}; the phone said:\n${p.output().slice(-3000)}`)
  })
  await p.sendDigits('7')
  await eventually(async () => backend.requests.find((q) => q.json.type === 'data' && q.json.data?.dtmf === '7'), 5_000, 'digit 7')
  t.pass("the phone's RFC 4733 digit reached the agent")
  await p.hold()
  await p.resume()
  await p.sendDigits('8')
  await eventually(async () => backend.requests.find((q) => q.json.type === 'data' && q.json.data?.dtmf === '8'), 5_000, 'digit 8')
  t.pass('held and resumed by re-INVITE, the call goes on: a digit after the resume reaches the agent too')
  await p.hangup()
  await p.waitFor('CALL_CLOSED')
  const ended = await eventually(async () => (await sessions()).find((r) => r.id === session.id && r.status === 'ended'))
  t.equal(ended.end_reason, 'caller_hangup', 'the caller hung up')

  // The phone closes its file when the call's audio stops, just after the event.
  const samples = await eventually(
    async () => {
      const file = p.heard()
      if (file === undefined) return undefined
      try {
        const heard = new wavefile.WaveFile(readFileSync(file)).getSamples(false, Int16Array) as unknown as Int16Array
        return heard.length > 0 ? heard : undefined
      } catch {
        return undefined
      }
    },
    5_000,
    'the WAV file of what the phone heard',
  )
  // Speech is loud somewhere: the loudest 200 ms of what the phone heard, against the line's silence.
  let loudest = 0
  for (let i = 0; i + 1600 <= samples.length; i += 800) loudest = Math.max(loudest, rms(samples.subarray(i, i + 1600)))
  t.ok(samples.length >= 4000, `at least half a second of audio heard (${(samples.length / 8000).toFixed(1)} s)`)
  t.ok(loudest > 500, `the welcome was heard over RTP (loudest 200 ms at RMS ${loudest.toFixed(0)})`)
  await eventually(async () => (c.gw.gateway.sip?.liveCalls === 0 ? true : undefined))
})

t.test('the agent hangs up: the phone gets a BYE', { skip }, async (t) => {
  backend.reply = (req) =>
    req.json.type === 'session.start'
      ? { kind: 'sse', steps: [{ data: { type: 'response.hangup', content: 'Goodbye.', turn_id: req.json.turn_id } }] }
      : sse(req.json.turn_id)
  t.teardown(() => {
    backend.reply = (req) => sse(req.json.turn_id, 'Noted.')
  })
  const before = (await sessions()).length
  const p = await phone(t)
  await p.dial(uri)
  await p.waitFor('CALL_ESTABLISHED')
  const closed = await p.waitFor('CALL_CLOSED', 10_000)
  t.pass(`the call was closed by the gateway (${String(closed.param)})`)
  const ended = await eventually(async () => (await sessions()).slice(before).find((r) => r.status === 'ended'))
  t.equal(ended.end_reason, 'hangup', 'the agent hung up')
})

t.test('a phone at an address no trunk allows is refused with 403 and leaves no session', { skip }, async (t) => {
  const before = (await sessions()).length
  const p = await phone(t, '127.0.0.2')
  await p.dial(uri)
  const closed = await p.waitFor('CALL_CLOSED', 10_000)
  t.match(String(closed.param), /403/, `refused: ${String(closed.param)}`)
  t.notOk(
    p.events.some((e) => e.type === 'CALL_ESTABLISHED'),
    'never connected',
  )
  t.equal((await sessions()).length, before, 'no session')
})
