/**
 * SRTP with a second real SIP stack: Debian's linphonec (liblinphone over belle-sip, libsrtp2), its media
 * encryption SDES-keyed SRTP and mandatory, calls a trunk whose `media_encryption` is `required` over TLS, checking the
 * gateway's certificate against our test CA. The call connects with the gateway's answer in RTP/SAVP and one crypto
 * line, the phone hears the welcome (it records what it decrypted; a packet that does not authenticate is dropped),
 * its keypad digit reaches the agent (its SRTP authenticated and decrypted here), and its hang-up ends the session as
 * `caller_hangup`. During the call it sends RFC 5626 CRLFCRLF keep-alives on the TLS connection every second: none
 * counts as malformed. The same phone offering plain RTP over TLS is refused with 488.
 */
import { readFileSync, statSync } from 'node:fs'
import t, { type Test } from 'tap'
import { quietMicrophone } from '../helpers/tones.js'
import wavefile from 'wavefile'
import { eventually, newBackendTenant, sse } from '../carrier-e2e/carrier-setup.js'
import { hasLinphone, type Linphone, startLinphone } from '../helpers/linphone.js'
import { selfSignedCertificate } from '../helpers/tls-cert.js'
import { toolSkip } from '../helpers/tool-required.js'
import { startSipWorld } from './sip-setup.js'

const skip = toolSkip(hasLinphone() ? false : 'linphonec is not installed (apt-get install linphone-cli)')

const { microphone } = quietMicrophone(t, 'linphone-srtp-')

const cert = selfSignedCertificate(t)
const world = await startSipWorld(t, { SIP_TLS_PORT: '0', SIP_TLS_CERT: cert.certPath, SIP_TLS_KEY: cert.keyPath })
const { c } = world
const tlsPort = c.gw.gateway.sip?.tlsPort
if (tlsPort === undefined) throw new Error('the gateway started without TLS')
const { tenant, backend } = await newBackendTenant(t, c, 'linphone-srtp-token')
const WELCOME = 'Hello, this call is encrypted between your phone and the gateway, from its first word to its last.'
backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? WELCOME : 'Noted.')
const trunk = await c.gw.request('POST', '/v1/sip/trunks', {
  key: tenant.apiKey,
  body: { name: 'secure-pbx', inbound: { allowed_cidrs: ['127.0.0.1/32'] }, media_encryption: 'required' },
})
if (trunk.status !== 201) throw new Error(trunk.text)
const uri = `sip:${tenant.number}@127.0.0.1:${tlsPort};transport=tls`

async function phone(t: Test, srtp: boolean): Promise<Linphone> {
  const p = await startLinphone({ microphone, tlsCaFile: cert.certPath, srtp, keepAliveS: 1 })
  t.teardown(() => p.close())
  return p
}

async function sessions() {
  return c.gw.store.db.selectFrom('sessions').selectAll().where('organization_id', '=', tenant.orgId).orderBy('created_at').execute()
}

/** The gateway's count of messages dropped as malformed, as /metrics shows it (absent: none yet). */
async function malformedOnMetrics(): Promise<number> {
  const metrics = await c.gw.request('GET', '/metrics', { key: null })
  const line = /^voxgate_sip_dropped_total\{reason="malformed"\} (\d+)$/m.exec(metrics.text)
  return line === null ? 0 : Number(line[1])
}

function rms(samples: Int16Array): number {
  let sum = 0
  for (const s of samples) sum += s * s
  return Math.sqrt(sum / Math.max(1, samples.length))
}

t.test('linphone with mandatory SRTP over TLS: SRTP both ways, the welcome heard, keep-alives, a clean hang-up', { skip }, async (t) => {
  const malformedBefore = await malformedOnMetrics()
  const p = await phone(t, true)
  p.call(uri)
  await p.waitFor(/Call 1 with .* connected\./, 10_000)
  const session = await eventually(async () => (await sessions()).find((r) => r.status === 'connected'), 5_000, 'a connected session')
  // What the phone wrote down of the answer it got: RTP/SAVP with the suite it offered first.
  const answer = /SIP\/2\.0 200 OK[\s\S]*?m=audio \d+ (\S+) [\s\S]*?a=crypto:(\d+) (\S+) inline:/.exec(p.log())
  t.same(answer?.slice(1, 4), ['RTP/SAVP', '1', 'AES_CM_128_HMAC_SHA1_80'], "the gateway's answer: RTP/SAVP, crypto tag 1")
  t.match(p.log(), /Negotiated media encryption is LinphoneMediaEncryptionSRTP/, 'the phone runs SRTP')

  // Two seconds of the welcome, decoded from what the phone could decrypt.
  await eventually(
    async () => (statSync(p.heardFile, { throwIfNoEntry: false })?.size ?? 0) >= 44 + 2 * 16_000 || undefined,
    10_000,
    'two seconds of audio heard',
  ).catch((e) => {
    throw new Error(`${String(e)}; the phone said:\n${p.output().slice(-3000)}`)
  })
  p.sendDigits('7')
  await eventually(async () => backend.requests.find((q) => q.json.type === 'data' && q.json.data?.dtmf === '7'), 5_000, 'digit 7')
  t.pass("the phone's SRTP digit reached the agent")
  const keepAlives = await eventually(
    async () => {
      const sent = p.log().match(new RegExp(`keep alive sent to \\[TLS://127\\.0\\.0\\.1:${tlsPort}\\]`, 'g'))?.length ?? 0
      return sent >= 2 ? sent : undefined
    },
    5_000,
    'two keep-alives on the TLS connection',
  )

  p.hangup()
  await p.waitFor(/Call 1 with .* ended/, 5_000)
  const ended = await eventually(async () => (await sessions()).find((r) => r.id === session.id && r.status === 'ended'))
  t.equal(ended.end_reason, 'caller_hangup', 'the phone hung up')
  await eventually(async () => (c.gw.gateway.sip?.liveCalls === 0 ? true : undefined))

  t.equal(c.gw.gateway.sip?.dropped.malformed, 0, `none of the ${keepAlives} keep-alives was dropped as malformed`)
  t.equal(await malformedOnMetrics(), malformedBefore, 'voxgate_sip_dropped_total{reason="malformed"} unchanged')
  t.notMatch(p.log(), /srtp_unprotect(_rtcp)?\(\) failed/, 'no SRTP or SRTCP packet of ours failed to authenticate')

  const samples = new wavefile.WaveFile(readFileSync(p.heardFile)).getSamples(false, Int16Array) as unknown as Int16Array
  let loudest = 0
  for (let i = 0; i + 1600 <= samples.length; i += 800) loudest = Math.max(loudest, rms(samples.subarray(i, i + 1600)))
  t.ok(loudest > 500, `the welcome was heard over SRTP (loudest 200 ms at RMS ${loudest.toFixed(0)})`)
})

t.test('the same phone offering plain RTP over TLS is refused with 488 and leaves no session', { skip }, async (t) => {
  const before = (await sessions()).length
  const p = await phone(t, false)
  p.call(uri)
  await p.waitFor(/Call 1 with .* error\./, 10_000)
  t.match(p.log(), /SIP\/2\.0 488 /, 'the gateway answered 488')
  t.notMatch(p.output(), /connected\./, 'never connected')
  t.equal((await sessions()).length, before, 'no session')
})
