/**
 * The shared media clock on real timers: many 20 ms streams are run in few wake-ups, each stream keeps its 20 ms
 * spacing, a stream behind its slots catches up at the half-slot pace, a throwing stream does not stop the others,
 * and a clock with no stream left holds no timer.
 */
import t from 'tap'
import { type ClockedStream, MediaClock } from '../../transports/sip/media/media-clock.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/** A 20 ms stream that notes when it ran, anchored to its first run like the pacer. */
function slotStream(runs: number[]): ClockedStream {
  let next: number | undefined
  return {
    run(now) {
      runs.push(now)
      next = (next ?? now) + 20
      return next
    },
  }
}

t.test('50 streams share the wake-ups, and each runs every 20 ms', async (t) => {
  const clock = new MediaClock()
  const runs = Array.from({ length: 50 }, () => [] as number[])
  const streams = runs.map((r) => slotStream(r))
  for (const [i, s] of streams.entries()) {
    clock.add(s)
    // Added at scattered moments, as calls are answered.
    if (i % 10 === 0) await sleep(3)
  }
  await sleep(1000)
  for (const s of streams) clock.remove(s)
  const wakeUps = new Set(runs.flat()).size
  const total = runs.flat().length
  t.ok(total >= 50 * 40, `every stream ran about once per 20 ms (${total} runs in ~1 s)`)
  // On their own timers, 50 streams at scattered phases would wake the loop ~2,500 times a second.
  t.ok(wakeUps <= 110, `the runs shared ${wakeUps} wake-ups (at most one per 10 ms tick)`)
  const gap = median(runs.flatMap((r) => r.slice(1).map((at, i) => at - r[i]!)))
  t.ok(gap >= 19 && gap <= 21, `a stream's runs are 20 ms apart (median ${gap} ms)`)
  t.equal(clock.size, 0)
})

t.test('a stream behind its slots runs at the next ticks until it caught up', async (t) => {
  const clock = new MediaClock()
  const runs: number[] = []
  // Like the pacer after a stall: its slots are 30 ms behind; each run sends one and asks for the next slot, but
  // never sooner than half a slot.
  let slot: number | undefined
  const stream: ClockedStream = {
    run(now) {
      runs.push(now)
      slot = (slot ?? now - 30) + 20
      return Math.max(now + 10, slot)
    },
  }
  clock.add(stream)
  await sleep(400)
  clock.remove({ run: (now) => now })
  t.equal(clock.size, 1, 'removing a stream that is not on the clock changes nothing')
  clock.remove(stream)
  t.ok(runs.length >= 10, `it ran ${runs.length} times`)
  // Judged by what the stream did, not by exact gaps: on a loaded machine a timer may come late (the stream then
  // falls behind again and catches up again). A clock that waited a whole slot after each run would leave the stream
  // 30 ms behind for ever; one that runs it at the next tick while it is behind lets it catch up.
  const gaps = runs.slice(1).map((at, i) => at - runs[i]!)
  t.ok(gaps.filter((g) => g < 18).length >= 2, `behind its slots, it ran sooner than a slot apart (gaps ${gaps.join(', ')} ms)`)
  t.ok(slot! >= runs.at(-1)!, `it caught up: its next slot is not behind its last run (slot ${slot}, last run ${runs.at(-1)})`)
  const steady = median(gaps.slice(-5))
  t.ok(steady >= 19 && steady <= 21, `then every 20 ms (median of the last gaps ${steady} ms)`)
})

t.test('a stream that throws does not stop the others; a stream can remove itself', async (t) => {
  const clock = new MediaClock()
  const good: number[] = []
  let thrown = 0
  let selfRuns = 0
  const self: ClockedStream = {
    run(now) {
      selfRuns++
      clock.remove(self)
      return now + 20
    },
  }
  const broken: ClockedStream = {
    run() {
      thrown++
      throw new Error('a broken stream')
    },
  }
  const other = slotStream(good)
  clock.add(broken)
  clock.add(other)
  clock.add(self)
  await sleep(200)
  clock.remove(broken)
  clock.remove(other)
  t.ok(thrown >= 5, `the throwing stream was run again (${thrown} times)`)
  t.ok(good.length >= 8, `the other stream ran on (${good.length} times)`)
  t.equal(selfRuns, 1, 'a stream that removed itself was not run again')
})

t.test('with no stream left the clock holds no timer (the process can exit)', async (t) => {
  const clock = new MediaClock()
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
  const before = timers()
  const s = slotStream([])
  clock.add(s)
  await sleep(50)
  t.equal(timers(), before + 1, 'one timer while a stream runs')
  clock.remove(s)
  t.equal(timers(), before, 'none once it is removed')
})
