/**
 * SRTP with a real phone: Debian's baresip, its `srtp` module on and its account set to
 * `mediaenc=srtp-mand` (RTP/SAVP with SDES crypto lines, nothing else), calls a trunk whose `media_encryption` is
 * `required` over TLS. The call connects, the phone hears the welcome (it decrypts our SRTP, and drops anything
 * that does not authenticate), its keypad digit reaches the agent (its SRTP authenticated and decrypted here), and
 * its hang-up ends the session. The same phone over UDP is refused with 488 (keys in clear-text SIP protect
 * nothing), and so is a plain RTP offer over TLS (the trunk requires SRTP).
 */
import { readFileSync, statSync } from 'node:fs'
import t, { type Test } from 'tap'
import { quietMicrophone, rms } from '../helpers/tones.js'
import wavefile from 'wavefile'
import { eventually, newBackendTenant, sse } from '../carrier-e2e/carrier-setup.js'
import { hasBaresipSrtp, type Phone, startPhone } from '../helpers/baresip.js'
import { selfSignedCertificate } from '../helpers/tls-cert.js'
import { toolSkip } from '../helpers/tool-required.js'
import { startSipWorld } from './sip-setup.js'

const skip = toolSkip(hasBaresipSrtp() ? false : 'baresip with its srtp module is not installed (apt-get install baresip-core)')

const { dir, microphone } = quietMicrophone(t, 'baresip-srtp-')

const cert = selfSignedCertificate(t)
const world = await startSipWorld(t, { SIP_HOST: '0.0.0.0', SIP_TLS_PORT: '0', SIP_TLS_CERT: cert.certPath, SIP_TLS_KEY: cert.keyPath })
const { c, sipPort } = world
const tlsPort = c.gw.gateway.sip?.tlsPort
if (tlsPort === undefined) throw new Error('the gateway started without TLS')
const { tenant, backend } = await newBackendTenant(t, c, 'baresip-srtp-token')
const WELCOME = 'Hello, this call is encrypted end to end between the phone and the gateway.'
backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? WELCOME : 'Noted.')
const trunk = await c.gw.request('POST', '/v1/sip/trunks', {
  key: tenant.apiKey,
  body: { name: 'secure-pbx', inbound: { allowed_cidrs: ['127.0.0.1/32'] }, media_encryption: 'required' },
})
if (trunk.status !== 201) throw new Error(trunk.text)

async function phone(t: Test, srtp = true): Promise<Phone> {
  const p = await startPhone({ microphone, tlsCaFile: cert.certPath, ...(srtp ? { mediaenc: 'srtp-mand' as const } : {}) })
  t.teardown(() => p.close())
  return p
}

async function sessions() {
  return c.gw.store.db.selectFrom('sessions').selectAll().where('organization_id', '=', tenant.orgId).orderBy('created_at').execute()
}

t.test('baresip with srtp-mand over TLS: SRTP both ways, the welcome heard, a clean hang-up', { skip }, async (t) => {
  const p = await phone(t)
  await p.dial(`sip:${tenant.number}@127.0.0.1:${tlsPort};transport=tls`)
  await p.waitFor('CALL_ESTABLISHED', 10_000)
  const session = await eventually(async () => (await sessions()).find((r) => r.status === 'connected'), 5_000, 'a connected session')
  await eventually(
    async () => (statSync(p.heard() ?? dir).isFile() && statSync(p.heard()!).size >= 16000 ? true : undefined),
    10_000,
    'a second of audio heard',
  ).catch((e) => {
    throw new Error(`${String(e)}; the phone said:\n${p.output().slice(-3000)}`)
  })
  // The phone's RFC 4733 digit reaches the agent only if its SRTP authenticated and decrypted here.
  await p.sendDigits('7')
  await eventually(async () => backend.requests.find((q) => q.json.type === 'data' && q.json.data?.dtmf === '7'), 5_000, 'digit 7')
  t.pass("the phone's SRTP digit reached the agent")
  // Read once the call is over: baresip's output reaches us through a pipe, a moment after its events.
  await p.hangup()
  await p.waitFor('CALL_CLOSED')
  t.match(p.output(), /SRTP is Enabled \(cryptosuite=AES_CM_128_HMAC_SHA1_80\)/, 'the phone runs SRTP with the suite we answered')

  const ended = await eventually(async () => (await sessions()).find((r) => r.id === session.id && r.status === 'ended'))
  t.equal(ended.end_reason, 'caller_hangup')
  const samples = await eventually(async () => {
    const file = p.heard()
    if (file === undefined) return undefined
    try {
      const heard = new wavefile.WaveFile(readFileSync(file)).getSamples(false, Int16Array) as unknown as Int16Array
      return heard.length > 0 ? heard : undefined
    } catch {
      return undefined
    }
  })
  let loudest = 0
  for (let i = 0; i + 1600 <= samples.length; i += 800) loudest = Math.max(loudest, rms(samples.subarray(i, i + 1600)))
  t.ok(loudest > 500, `the welcome was heard over SRTP (loudest 200 ms at RMS ${loudest.toFixed(0)})`)
  await eventually(async () => (c.gw.gateway.sip?.liveCalls === 0 ? true : undefined))
})

t.test('the same phone over UDP is refused with 488: SRTP keys may not travel in clear-text SIP', { skip }, async (t) => {
  const before = (await sessions()).length
  const p = await phone(t)
  await p.dial(`sip:${tenant.number}@127.0.0.1:${sipPort}`)
  const closed = await p.waitFor('CALL_CLOSED', 10_000)
  t.match(String(closed.param), /488/, `refused: ${String(closed.param)}`)
  t.equal((await sessions()).length, before, 'no session')
})

t.test('a plain RTP offer over TLS to the required trunk is refused with 488 and leaves no session', { skip }, async (t) => {
  const before = (await sessions()).length
  const p = await phone(t, false)
  await p.dial(`sip:${tenant.number}@127.0.0.1:${tlsPort};transport=tls`)
  const closed = await p.waitFor('CALL_CLOSED', 10_000)
  t.match(String(closed.param), /488/, `refused: ${String(closed.param)}`)
  t.notOk(
    p.events.some((e) => e.type === 'CALL_ESTABLISHED'),
    'never connected',
  )
  t.equal((await sessions()).length, before, 'no session')
})
