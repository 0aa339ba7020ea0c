/**
 * The warm transfer's driver on a fake clock: it carries out the machine's actions through the I/O in order, arms
 * the deadline timer (and re-arms or drops it as the machine moves), turns a refused dial and a failed whisper into
 * inputs, and `abort()` (the session ended) stops the work in flight and hangs up the human's leg once.
 */
import t from 'tap'
import type { TransferEndedBy, TransferFact, TransferFailureReason } from '../../gateway/transfer/transfer-steps.js'
import { type DriverClock, WarmTransferDriver, type WarmTransferIo } from '../../gateway/transfer/warm-transfer-driver.js'
import type { WarmTransferPlan } from '../../gateway/transfer/warm-transfer-machine.js'

/** A clock whose timers fire only when the test moves time. */
function fakeClock() {
  let now = 0
  const timers = new Set<{ at: number; fn: () => void }>()
  const clock: DriverClock = {
    now: () => now,
    setTimer(fn, ms) {
      const timer = { at: now + ms, fn }
      timers.add(timer)
      return () => timers.delete(timer)
    },
  }
  return {
    clock,
    pending: () => [...timers].map((x) => x.at),
    advance(ms: number) {
      now += ms
      for (const timer of [...timers]) {
        if (timer.at <= now) {
          timers.delete(timer)
          timer.fn()
        }
      }
    },
  }
}

/** I/O that records each call; dialling and the whisper resolve when the test says. */
function recordingIo() {
  const calls: string[] = []
  let dial: { resolve: () => void; reject: (e: Error) => void } | undefined
  let whisper: { resolve: () => void; reject: (e: Error) => void; signal: AbortSignal } | undefined
  const io: WarmTransferIo = {
    dialHuman: () =>
      new Promise((resolve, reject) => {
        calls.push('dial')
        dial = { resolve, reject }
      }),
    startHold: (line) => void calls.push(`hold:${line ?? ''}`),
    stopHold: () => void calls.push('stop_hold'),
    speakWhisper: (text, signal, done) => {
      calls.push(`whisper:${text}`)
      whisper = { resolve: () => done(), reject: (e) => done(e), signal }
    },
    bridge: () => void calls.push('bridge'),
    stopHumanLeg: () => void calls.push('stop_leg'),
    returnToAgent: (reason: TransferFailureReason) => void calls.push(`return:${reason}`),
    endSession: (by: TransferEndedBy) => void calls.push(`end:${by}`),
    report: (fact: TransferFact) =>
      void calls.push(fact.type === 'transfer.failed' ? `report:failed:${fact.reason}` : `report:${fact.type}`),
  }
  return { io, calls, dial: () => dial, whisper: () => whisper }
}

const PLAN: WarmTransferPlan = { whisper: 'Refund.', hold: 'Please hold.', accept: 'dtmf', timeoutMs: 10_000 }

function driver(plan: WarmTransferPlan = PLAN) {
  const time = fakeClock()
  const rec = recordingIo()
  const errors: string[] = []
  const d = new WarmTransferDriver(plan, rec.io, time.clock, (step) => errors.push(step))
  return { d, time, rec, errors }
}

const tick = () => new Promise((r) => setImmediate(r))

t.test('accepted: actions in order, the deadline timer armed from the start and dropped at the bridge', async (t) => {
  const { d, time, rec } = driver()
  d.start()
  t.strictSame(rec.calls, ['report:transfer.started', 'dial', 'hold:Please hold.'])
  t.strictSame(time.pending(), [10_000], 'the timeout is armed')
  time.advance(2_000)
  d.input({ type: 'progress', progress: 'answered' })
  t.match(rec.calls.slice(3), ['report:transfer.answered', /^whisper:Refund\. Press 1/])
  rec.whisper()?.resolve()
  await tick()
  t.equal(d.machine.phase, 'awaiting_acceptance', 'the whisper played: a key is awaited')
  d.input({ type: 'dtmf', digits: '1' })
  t.strictSame(rec.calls.slice(5), ['stop_hold', 'bridge', 'report:transfer.connected'])
  t.ok(d.bridged && d.active, 'bridged')
  t.strictSame(time.pending(), [], 'no deadline once bridged')
  d.input({ type: 'human_hangup' })
  t.strictSame(rec.calls.slice(8), ['end:human'])
  t.notOk(d.active, 'over')
})

t.test('the timer fires: timeout fails the transfer, hangs up the leg and gives the caller back', async (t) => {
  const { d, time, rec } = driver()
  d.start()
  d.input({ type: 'progress', progress: 'ringing' })
  time.advance(9_999)
  t.equal(d.machine.phase, 'ringing', 'not before the deadline')
  time.advance(1)
  t.strictSame(rec.calls.slice(3), ['stop_leg', 'stop_hold', 'return:timeout', 'report:failed:timeout'])
  t.notOk(d.active)
  t.ok(d.signal.aborted, 'work in flight is cancelled')
  d.input({ type: 'progress', progress: 'answered' })
  t.equal(rec.calls.length, 7, 'nothing happens after the end')
})

t.test('a refused dial is a failed transfer; busy and no-answer map to their reasons', async (t) => {
  const { d, rec, errors } = driver()
  d.start()
  rec.dial()?.reject(new Error('carrier said no'))
  await tick()
  t.strictSame(rec.calls.slice(3), ['stop_hold', 'return:failed', 'report:failed:failed'], 'the leg never existed: nothing to hang up')
  t.strictSame(errors, ['dial_human'])
  for (const progress of ['busy', 'no_answer'] as const) {
    const x = driver()
    x.d.start()
    x.d.input({ type: 'progress', progress })
    t.strictSame(x.rec.calls.slice(3), ['stop_hold', `return:${progress}`, `report:failed:${progress}`], progress)
  }
})

t.test('a whisper that fails still lets the human accept; a decline hangs the leg up', async (t) => {
  const { d, rec, errors } = driver()
  d.start()
  d.input({ type: 'progress', progress: 'answered' })
  rec.whisper()?.reject(new Error('tts down'))
  await tick()
  t.strictSame(errors, ['speak_whisper'])
  t.equal(d.machine.phase, 'awaiting_acceptance')
  d.input({ type: 'dtmf', digits: '2' })
  t.strictSame(rec.calls.slice(5), ['stop_leg', 'stop_hold', 'return:declined', 'report:failed:declined'])
})

t.test('abort (the session ended): the whisper in flight is cancelled, hold stops, the leg is hung up once', async (t) => {
  const { d, time, rec } = driver()
  d.start()
  d.input({ type: 'progress', progress: 'answered' })
  const whisper = rec.whisper()
  d.abort()
  d.abort()
  t.ok(whisper?.signal.aborted, 'the whisper was told to stop')
  t.strictSame(rec.calls.slice(5), ['stop_hold', 'stop_leg'], 'cleaned up once')
  t.strictSame(time.pending(), [], 'no timer left')
  whisper?.resolve()
  await tick()
  t.equal(rec.calls.length, 7, 'a late whisper end does nothing')
})

t.test('the caller hangs up a bridged call: the leg is hung up and the session ends saying so', async (t) => {
  const { d, rec } = driver({ ...PLAN, whisper: undefined, accept: 'none' })
  d.start()
  d.input({ type: 'progress', progress: 'answered' })
  t.ok(d.bridged, 'accept none without a whisper bridges on answer')
  d.input({ type: 'caller_hangup' })
  t.strictSame(rec.calls.slice(-2), ['stop_leg', 'end:caller'])
})

t.test('a deadline timer that fires before the clock reaches the deadline is armed again, and the timeout comes', async (t) => {
  // Node's timers run off the event loop's cached time: after a long tick one can fire a few ms early by
  // performance.now(). The machine ignores such a timeout; the driver must then wait for what is left.
  let now = 0
  const timers: { at: number; fn: () => void }[] = []
  const clock = {
    now: () => now,
    setTimer(fn: () => void, ms: number) {
      const timer = { at: now + ms, fn }
      timers.push(timer)
      return () => timers.splice(timers.indexOf(timer), 1)
    },
  }
  const rec = recordingIo()
  const d = new WarmTransferDriver(PLAN, rec.io, clock, () => undefined)
  d.start()
  t.same(
    timers.map((x) => x.at),
    [10_000],
  )
  // The timer fires 3 ms early.
  now = 9_997
  timers.shift()?.fn()
  t.notOk(rec.calls.includes('return:timeout'), 'not yet: the machine ignored the early timeout')
  t.same(
    timers.map((x) => x.at),
    [10_000],
    'armed again for the 3 ms left',
  )
  now = 10_000
  timers.shift()?.fn()
  t.ok(rec.calls.includes('return:timeout'), 'the transfer timed out')
  t.ok(rec.calls.includes('report:failed:timeout'))
  t.same(timers, [], 'no timer left')
  t.equal(d.active, false)
})
