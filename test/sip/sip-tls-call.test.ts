/**
 * A SIP call over TLS end to end: a gateway started with SIP_TLS_PORT=0 and a certificate openssl made for this
 * run, a trunk for 127.0.0.1, and the test phone with its SIP on a TLS connection (RTP stays UDP). The call gets
 * 200 with a Contact for TLS, the caller hears the welcome as RTP, the agent's hang-up comes back as a BYE on the
 * same TLS connection, and a caller's BYE is answered. (Debian's sipp is built without OpenSSL, so it cannot
 * speak TLS: the phone here is test/helpers/sip-caller.ts.)
 */
import t, { type Test } from 'tap'
import { getHeader } from '../../transports/sip/message/sip-message.js'
import { eventually, newBackendTenant, sse } from '../carrier-e2e/carrier-setup.js'
import { SipCaller } from '../helpers/sip-caller.js'
import { selfSignedCertificate } from '../helpers/tls-cert.js'
import { addTrunk, startSipWorld } from './sip-setup.js'

const cert = selfSignedCertificate(t)
const world = await startSipWorld(t, { SIP_TLS_PORT: '0', SIP_TLS_CERT: cert.certPath, SIP_TLS_KEY: cert.keyPath })
const { c } = world
const tlsPort = c.gw.gateway.sip?.tlsPort
if (tlsPort === undefined) throw new Error('the gateway started without TLS')
const { tenant, backend } = await newBackendTenant(t, c, 'sip-tls-token')
backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello over TLS.' : 'Noted.')
await addTrunk(world, tenant.apiKey, { allowed_cidrs: ['127.0.0.1/32'] }, 'tls-pbx')

async function phone(t: Test): Promise<SipCaller> {
  const p = await SipCaller.openTls({ host: '127.0.0.1', port: tlsPort ?? 0 }, cert.cert)
  t.teardown(() => p.close())
  return p
}

async function sessions() {
  return c.gw.store.db.selectFrom('sessions').selectAll().where('organization_id', '=', tenant.orgId).orderBy('created_at').execute()
}

/** Non-silent mu-law packets: the welcome, not the steady silence. */
const loud = (p: SipCaller) => p.heard.filter((h) => h.payloadType === 0 && h.payload.some((b) => (b & 0x7f) < 0x70))

t.test('a call over TLS: 200 with a TLS Contact, the welcome heard as RTP, the caller hangs up', async (t) => {
  const p = await phone(t)
  p.invite(tenant.number)
  const ok = await p.final()
  t.equal(ok.status, 200)
  t.equal(getHeader(ok, 'Contact'), `<sip:127.0.0.1:${tlsPort};transport=tls>`)
  t.match(getHeader(ok, 'Via'), /^SIP\/2\.0\/TLS /)
  p.ack(ok)
  await eventually(async () => (loud(p).length >= 10 ? true : undefined), 5_000, 'the welcome over RTP')
  t.pass('the welcome was heard')
  const [row] = await sessions()
  t.equal(row?.channel, 'sip')
  p.bye()
  t.equal((await p.final()).status, 200, 'BYE answered on the TLS connection')
  const ended = await eventually(async () => {
    const [r] = await sessions()
    return r?.status === 'ended' ? r : undefined
  })
  t.equal(ended.end_reason, 'caller_hangup')
})

t.test("the agent's hang-up reaches the caller as a BYE on the TLS connection", async (t) => {
  backend.reply = (req) =>
    req.json.type === 'session.start'
      ? { kind: 'sse', steps: [{ data: { type: 'response.hangup', content: 'Goodbye.', turn_id: req.json.turn_id } }] }
      : sse(req.json.turn_id)
  const p = await phone(t)
  p.invite(tenant.number)
  const ok = await p.final()
  t.equal(ok.status, 200)
  p.ack(ok)
  const bye = await p.byes.next(5_000, 'BYE from the gateway')
  t.equal(getHeader(bye, 'Call-ID'), p.callId)
  t.match(getHeader(bye, 'Via'), new RegExp(`^SIP/2\\.0/TLS 127\\.0\\.0\\.1:${tlsPort};`), 'our Via names TLS and its port')
  await eventually(async () => (c.gw.gateway.sip?.liveCalls === 0 ? true : undefined), 5_000, 'no call left')
  t.pass('the call is gone')
})
