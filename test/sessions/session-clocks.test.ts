/**
 * A session's clocks: the duration limit does not count time on hold (overlapping holds count once), looks again
 * while a hold lasts, and ends the session once the time not held reaches the limit.
 */
import t from 'tap'
import type { PipelineConfig } from '../../pipeline/index.js'
import { SessionClocks } from '../../gateway/sessions/session-clocks.js'

const config = { session_duration_timeout_minutes: 1, plugins: [] } as unknown as PipelineConfig
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

t.test('held time is summed once across overlapping holds', async (t) => {
  let now = 1_000
  const told: string[] = []
  const clocks = new SessionClocks({
    config,
    minuteMs: 60_000,
    isTransferring: () => false,
    end: () => undefined,
    recordingHeld: (kind, on) => told.push(`${kind}:${on}`),
    now: () => now,
  })
  clocks.start()
  now += 100
  clocks.held('sip_hold', true)
  now += 50
  clocks.held('transfer_hold', true)
  now += 100
  clocks.held('sip_hold', false)
  now += 30
  t.equal(clocks.heldMs(), 180, 'an open hold counts to now')
  clocks.held('transfer_hold', false)
  clocks.held('transfer_hold', false)
  now += 500
  t.equal(clocks.heldMs(), 180)
  t.strictSame(
    told,
    ['sip_hold:true', 'transfer_hold:true', 'sip_hold:false', 'transfer_hold:false'],
    'the recording is told once per change',
  )
  t.match(clocks.heldSpans, [
    { kind: 'sip_hold', from: 100, to: 250 },
    { kind: 'transfer_hold', from: 150, to: 280 },
  ])
  clocks.stop()
})

t.test('the limit is extended by the time held', async (t) => {
  const ends: number[] = []
  const started = Date.now()
  const clocks = new SessionClocks({ config, minuteMs: 300, isTransferring: () => false, end: () => ends.push(Date.now() - started) })
  clocks.start()
  await sleep(100)
  clocks.held('sip_hold', true)
  await sleep(400)
  t.strictSame(ends, [], 'not ended while held past the limit')
  clocks.held('sip_hold', false)
  await sleep(500)
  t.equal(ends.length, 1, 'ended once')
  t.ok(ends[0]! >= 690 && ends[0]! < 900, `at the limit plus the hold (${ends[0]} ms)`)
  clocks.stop()
})

t.test('without holds the limit ends the session on time; stop() cancels it', async (t) => {
  const ends: number[] = []
  const started = Date.now()
  const a = new SessionClocks({ config, minuteMs: 200, isTransferring: () => false, end: () => ends.push(Date.now() - started) })
  a.start()
  const b = new SessionClocks({ config, minuteMs: 200, isTransferring: () => false, end: () => ends.push(-1) })
  b.start()
  b.stop()
  await sleep(350)
  t.equal(ends.length, 1)
  t.ok(ends[0]! >= 195 && ends[0]! < 320, `at ${ends[0]} ms`)
  a.stop()
})
