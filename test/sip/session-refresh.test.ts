/**
 * RFC 4028 with the gateway as the refresher (`refresher=uas` on an inbound call), over a real endpoint on a
 * scheduler that runs session-timer lengths (40 s and more) 50 times faster, so the refresh due at 45 s comes
 * after 0.9 s while the transaction timers keep their RFC values. sipp (fixtures/sipp/session-refresh.xml) gets
 * our re-INVITE (its INVITE does not allow UPDATE) with the same SDP at version 2; the test phone, which allows
 * UPDATE, gets UPDATEs; a refresh answered 481 ends the call with our BYE and the session as
 * `client_disconnected`. The pure parts (the plan after a refresh, the SDP version, the outcomes) run here too.
 */
import { execFile } from 'node:child_process'
import { sippMissing } from '../helpers/sipp.js'
import { toolSkip } from '../helpers/tool-required.js'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { silentLogger } from '../../core/log.js'
import type { EndReason } from '../../core/end-reason.js'
import { CallSessionTimer, planAfterRefresh } from '../../transports/sip/calls/call-session-timer.js'
import { nextSdpVersion, refreshOutcome } from '../../transports/sip/calls/session-refresh.js'
import type { SipSessionPort } from '../../transports/sip/calls/sip-call-transport.js'
import { SipEndpoint } from '../../transports/sip/endpoint/sip-endpoint.js'
import { getHeader } from '../../transports/sip/message/sip-message.js'
import type { TimerScheduler } from '../../transports/sip/timer-scheduler.js'
import { eventually } from '../helpers/eventually.js'
import { freePort } from '../helpers/nginx.js'
import { SipCaller } from '../helpers/sip-caller.js'

const skipSipp = toolSkip(sippMissing)
const rtpMin = 44_000 + 2 * Math.floor(Math.random() * 5_000)

/** Session-timer lengths (40 s and more) 50 times faster; transaction timers as they are. */
const fastSessionTimers: TimerScheduler = {
  schedule(ms, fire) {
    const handle = setTimeout(fire, ms >= 40_000 ? ms / 50 : ms)
    return { cancel: () => clearTimeout(handle) }
  },
}

function recordedSession(): SipSessionPort & { ends: string[] } {
  const ends: string[] = []
  return {
    id: 'sess_refresh',
    isEnded: false,
    ends,
    end: async (reason: EndReason) => void ends.push(`end:${reason}`),
    transportClosed: async (reason?: EndReason) => void ends.push(`closed:${reason}`),
  }
}

async function endpoint(t: Test) {
  const session = recordedSession()
  const sip = await SipEndpoint.start({
    timers: fastSessionTimers,
    host: '127.0.0.1',
    port: 0,
    publicHost: '127.0.0.1',
    log: silentLogger(),
    admission: async () => ({ admit: true, open: async () => ({ admit: true, session }) }),
    rtpPorts: { min: rtpMin, max: rtpMin + 20 },
  })
  t.teardown(() => sip.close())
  return { sip, session }
}

t.test('sipp: refresher=uas without UPDATE gets our re-INVITE at half the interval, same SDP, version 2', { skip: skipSipp }, async (t) => {
  const { sip, session } = await endpoint(t)
  const file = fileURLToPath(new URL('./fixtures/sipp/session-refresh.xml', import.meta.url))
  const args = ['-sf', file, '-s', '+14155552671', '-m', '1', '-i', '127.0.0.1', '-p', '0', '-mi', '127.0.0.1']
  args.push(
    '-mp',
    String(await freePort()),
    '-timeout',
    '15',
    '-timeout_error',
    '-nostdin',
    '-recv_timeout',
    '5000',
    `127.0.0.1:${sip.port}`,
  )
  const run = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile('sipp', args, { timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, output: `${stdout}\n${stderr}`.slice(-3000) })
    })
  })
  t.equal(run.code, 0, `sipp played session-refresh as written${run.code === 0 ? '' : `:\n${run.output}`}`)
  await eventually(async () => (sip.liveCalls === 0 ? true : undefined))
  t.same(session.ends, ['closed:caller_hangup'], 'the refresh kept the call until the BYE')
})

t.test('a peer that allows UPDATE gets UPDATE refreshes without SDP; a 481 ends the call with our BYE', async (t) => {
  const { sip, session } = await endpoint(t)
  const phone = await SipCaller.open({ host: '127.0.0.1', port: sip.port })
  t.teardown(() => phone.close())
  phone.invite('+14155552671', { extra: ['Allow: INVITE, ACK, BYE, UPDATE', 'Supported: timer', 'Session-Expires: 90;refresher=uas'] })
  const ok = await phone.final()
  t.same([ok.status, getHeader(ok, 'Session-Expires'), getHeader(ok, 'Require')], [200, '90;refresher=uas', undefined])
  phone.ack(ok)
  const first = await phone.requests.next(3_000, 'the first refresh')
  t.same(
    [first.method, getHeader(first, 'Session-Expires'), getHeader(first, 'Supported'), first.body.length],
    ['UPDATE', '90;refresher=uac', 'timer', 0],
  )
  t.equal(getHeader(first, 'Call-ID'), phone.callId)
  phone.respond(first, 200, [
    { name: 'Session-Expires', value: '90;refresher=uac' },
    { name: 'Require', value: 'timer' },
  ])
  const second = await phone.requests.next(3_000, 'the next refresh, half an interval later')
  t.equal(second.method, 'UPDATE')
  t.ok(Number.parseInt(getHeader(second, 'CSeq') ?? '', 10) > Number.parseInt(getHeader(first, 'CSeq') ?? '', 10), 'a new CSeq')
  phone.respond(second, 481)
  const bye = await phone.byes.next(3_000, 'our BYE once the dialog is gone')
  t.equal(getHeader(bye, 'Call-ID'), phone.callId)
  await eventually(async () => (sip.liveCalls === 0 ? true : undefined))
  t.same(session.ends, ['closed:client_disconnected'])
})

t.test('the plan after our refresh: the 2xx says who refreshes next; none, no timer', async (t) => {
  const answer = (value?: string) => ({ headers: value === undefined ? [] : [{ name: 'Session-Expires', value }] })
  t.same(planAfterRefresh(answer('120;refresher=uac'), 90), { intervalS: 120, weRefresh: true })
  t.same(planAfterRefresh(answer('120; refresher=UAS'), 90), { intervalS: 120, weRefresh: false }, 'the peer takes over')
  t.same(planAfterRefresh(answer('30;refresher=uac'), 90), { intervalS: 90, weRefresh: true }, 'never below the RFC minimum')
  t.equal(planAfterRefresh(answer(), 90), undefined, 'a 2xx without Session-Expires ends the timer')
  t.same(planAfterRefresh(answer('soon'), 90), { intervalS: 90, weRefresh: true }, 'an unreadable one keeps ours')
  t.same(planAfterRefresh(undefined, 90), { intervalS: 90, weRefresh: true }, 'an UPDATE answer (status only) keeps ours')
})

t.test('outcomes: 2xx refreshed; 408, 481 and no answer mean the dialog is gone; others are tried again', async (t) => {
  t.equal(refreshOutcome(200).kind, 'refreshed')
  for (const s of [408, 481, 'timeout'] as const) t.equal(refreshOutcome(s).kind, 'gone', String(s))
  for (const s of [491, 488, 500, 503]) t.same(refreshOutcome(s), { kind: 'failed', status: s })
})

t.test('our SDP again: same session id, version + 1', async (t) => {
  const sdp = 'v=0\r\no=voxgate 123456 7 IN IP4 10.0.0.1\r\ns=-\r\n'
  t.same(nextSdpVersion(sdp), { sdp: 'v=0\r\no=voxgate 123456 8 IN IP4 10.0.0.1\r\ns=-\r\n', version: 8 })
  t.same(nextSdpVersion('v=0\r\n'), { sdp: 'v=0\r\n', version: undefined })
})

t.test('the timer on a virtual clock: our refresh at half the interval, the peer deadline otherwise, retries', async (t) => {
  let now = 0
  const due: { at: number; fire: () => void; live: boolean }[] = []
  const clock: TimerScheduler = {
    schedule(ms, fire) {
      const timer = { at: now + ms, fire, live: true }
      due.push(timer)
      return {
        cancel: () => {
          timer.live = false
        },
      }
    },
  }
  const advance = (ms: number) => {
    now += ms
    for (const d of due.filter((d) => d.live && d.at <= now)) {
      d.live = false
      d.fire()
    }
  }
  const heard: string[] = []
  const timer = new CallSessionTimer(clock, {
    onExpired: () => heard.push(`expired@${now}`),
    onRefresh: (s) => heard.push(`refresh(${s})@${now}`),
  })
  timer.arm({ intervalS: 90, weRefresh: true })
  advance(44_999)
  t.same(heard, [])
  advance(1)
  t.same(heard, ['refresh(90)@45000'])
  timer.retry(4_000, 90)
  advance(4_000)
  t.same(heard.at(-1), 'refresh(90)@49000', 'a failed refresh is tried again')
  timer.arm({ intervalS: 90, weRefresh: false })
  advance(60_000)
  t.same(heard.at(-1), 'expired@109000', 'the peer refreshes now: its deadline is 90 - 30 s')
  timer.arm(undefined)
  advance(1_000_000)
  t.equal(heard.length, 3, 'no plan, no timer')
})
