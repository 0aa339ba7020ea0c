/**
 * CANCEL of a ringing call, with the admission held by the test so the CANCEL surely comes first (against the
 * gateway's store the admission may finish within one turn of the event loop): over a real endpoint and the
 * test phone. The session side is the `SipSessionPort` a transport drives, recorded here.
 */
import t, { type Test } from 'tap'
import { silentLogger } from '../../core/log.js'
import type { EndReason } from '../../core/end-reason.js'
import { SipEndpoint } from '../../transports/sip/sip-endpoint.js'
import type { SipAdmission } from '../../transports/sip/sip-admission.js'
import type { SipSessionPort } from '../../transports/sip/sip-call-transport.js'
import { getHeader } from '../../transports/sip/sip-message.js'
import { eventually } from '../helpers/eventually.js'
import { SipCaller } from '../helpers/sip-caller.js'

const rtpMin = 40_000 + 2 * Math.floor(Math.random() * 5_000)

async function endpoint(t: Test, admission: SipAdmission) {
  const sip = await SipEndpoint.start({
    host: '127.0.0.1',
    port: 0,
    publicHost: '127.0.0.1',
    log: silentLogger(),
    admission,
    rtpPorts: { min: rtpMin, max: rtpMin + 20 },
  })
  t.teardown(() => sip.close())
  const phone = await SipCaller.open({ host: '127.0.0.1', port: sip.port })
  t.teardown(() => phone.close())
  return { sip, phone }
}

/** A session that records how it was ended. */
function recordedSession(): SipSessionPort & { ends: string[] } {
  const ends: string[] = []
  return {
    id: 'sess_test',
    isEnded: false,
    ends,
    end: async (reason: EndReason) => void ends.push(`end:${reason}`),
    transportClosed: async (reason?: EndReason) => void ends.push(`closed:${reason}`),
  }
}

/** The next three answers, as `status method`. */
async function answers(phone: SipCaller, n: number): Promise<string[]> {
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    const r = await phone.next()
    out.push(`${r.status} ${getHeader(r, 'CSeq')?.split(' ')[1]}`)
    if (r.status === 487) phone.ackError(r)
  }
  return out.sort()
}

t.test('CANCEL while the admission looks the call up: 200, the INVITE 487, no session opened', async (t) => {
  let opened = 0
  let decide: () => void = () => undefined
  const { sip, phone } = await endpoint(
    t,
    () =>
      new Promise((resolve) => {
        decide = () =>
          resolve({
            admit: true,
            open: async () => {
              opened++
              return { admit: true, session: recordedSession() }
            },
          })
      }),
  )
  phone.invite('+14155552671')
  t.equal((await phone.next()).status, 100)
  phone.cancel()
  t.same(await answers(phone, 2), ['200 CANCEL', '487 INVITE'])
  decide()
  await new Promise((r) => setImmediate(r))
  t.equal(opened, 0, 'the session was never opened')
  t.equal(sip.liveCalls, 0)
})

t.test('CANCEL while the session opens: the INVITE gets 487 and the opened session ends as a caller hang-up', async (t) => {
  const session = recordedSession()
  let release: () => void = () => undefined
  const { sip, phone } = await endpoint(t, async () => ({
    admit: true,
    open: () => new Promise((resolve) => (release = () => resolve({ admit: true, session }))),
  }))
  phone.invite('+14155552671')
  t.equal((await phone.next()).status, 100)
  await eventually(async () => (sip.liveCalls === 1 ? true : undefined))
  phone.cancel()
  t.same(await answers(phone, 2), ['200 CANCEL', '487 INVITE'])
  release()
  await eventually(async () => (session.ends.length > 0 ? true : undefined))
  t.same(session.ends, ['end:caller_hangup'])
  t.equal(sip.liveCalls, 0, 'the call and its RTP port are gone')
  await phone.next(300).then(
    (r) => t.fail(`unexpected ${r.status}`),
    () => t.pass('no 200 for the cancelled INVITE'),
  )
})

t.test('a refusal from open reaches the caller with its status and headers', async (t) => {
  const { sip, phone } = await endpoint(t, async () => ({
    admit: true,
    open: async () => ({
      admit: false,
      status: 503,
      reason: 'the gateway is shutting down',
      headers: [{ name: 'Retry-After', value: '30' }],
    }),
  }))
  phone.invite('+14155552671')
  const r = await phone.final()
  t.same([r.status, r.reason, getHeader(r, 'Retry-After')], [503, 'the gateway is shutting down', '30'])
  phone.ackError(r)
  t.equal(sip.liveCalls, 0)
})
