import t from 'tap'
import {
  HOLD_FLOOR_DBFS,
  HOLD_PEAK_DBFS,
  HOLD_PERIOD_FRAMES,
  holdAudioFrame,
  holdAudioLoop,
  holdFrameSamples,
  type HoldSampleRate,
} from '../../gateway/transfer/hold-audio.js'

const RATES: HoldSampleRate[] = [8000, 16000]
const dbfs = (x: number): number => 20 * Math.log10(x / 32767)
const peakOf = (s: Int16Array): number => s.reduce((m, v) => Math.max(m, Math.abs(v)), 0)
const rmsOf = (s: Int16Array): number => Math.sqrt(s.reduce((a, v) => a + v * v, 0) / s.length)
const maxStep = (s: Int16Array): number => {
  let m = 0
  for (let i = 1; i < s.length; i++) m = Math.max(m, Math.abs(s[i]! - s[i - 1]!))
  return m
}

t.test('20 ms frames, a 4 s loop, the same frames every time', async (t) => {
  for (const rate of RATES) {
    t.equal(holdFrameSamples(rate), rate / 50)
    t.equal(holdAudioLoop(rate).length, (rate * 4000) / 1000)
    t.equal(holdAudioFrame(rate, 7).length, rate / 50)
    t.strictSame(holdAudioFrame(rate, 3), holdAudioFrame(rate, 3 + HOLD_PERIOD_FRAMES), 'the loop repeats')
    t.strictSame(holdAudioFrame(rate, -1), holdAudioFrame(rate, HOLD_PERIOD_FRAMES - 1), 'negative indices wrap')
    t.equal(holdAudioLoop(rate), holdAudioLoop(rate), 'computed once')
  }
})

t.test('peak level is -18 dBFS', async (t) => {
  for (const rate of RATES) {
    const peak = dbfs(peakOf(holdAudioLoop(rate)))
    t.ok(peak <= HOLD_PEAK_DBFS + 0.01 && peak >= HOLD_PEAK_DBFS - 0.01, `${rate} Hz: peak ${peak.toFixed(2)} dBFS`)
  }
})

t.test('never silent: every 20 ms frame is at or above the floor, and no sample run is digital silence', async (t) => {
  for (const rate of RATES) {
    let quietest = 0
    for (let i = 0; i < HOLD_PERIOD_FRAMES; i++) quietest = Math.min(quietest, dbfs(rmsOf(holdAudioFrame(rate, i))))
    t.ok(quietest >= HOLD_FLOOR_DBFS, `${rate} Hz: quietest frame ${quietest.toFixed(1)} dBFS >= ${HOLD_FLOOR_DBFS}`)
    t.ok(quietest < HOLD_FLOOR_DBFS + 10, 'the floor is the pad, close to its stated level')
    // Longest run of zero samples: the pad crosses zero, it never rests there (not one 1 ms block of zeros).
    const loop = holdAudioLoop(rate)
    let run = 0
    let longest = 0
    for (const s of loop) {
      run = s === 0 ? run + 1 : 0
      longest = Math.max(longest, run)
    }
    t.ok(longest < rate / 1000, `${rate} Hz: longest zero run ${longest} samples`)
  }
})

t.test('the chime comes every 4 s: two note onsets per loop, 450 ms apart', async (t) => {
  for (const rate of RATES) {
    const levels = Array.from({ length: 3 * HOLD_PERIOD_FRAMES }, (_, i) => dbfs(rmsOf(holdAudioFrame(rate, i))))
    const onsets: number[] = []
    // An onset is the first frame of a rise (3 dB or more over the frame before); a ringing note only decays.
    const rises = (i: number): boolean => i >= 1 && levels[i]! - levels[i - 1]! >= 3
    for (let i = 1; i < levels.length; i++) if (rises(i) && !rises(i - 1)) onsets.push(i * 20)
    t.strictSame(onsets, [440, 4000, 4440, 8000, 8440], `${rate} Hz: onsets in ms (the second note starts within the frame at 440 ms)`)
    // Between chimes, only the pad: the last second of the loop is 14 dB or more below the peak.
    const tail = holdAudioLoop(rate).subarray(rate * 3, rate * 4)
    t.ok(dbfs(peakOf(tail)) < HOLD_PEAK_DBFS - 12, `${rate} Hz: between chimes ${dbfs(peakOf(tail)).toFixed(1)} dBFS`)
  }
})

t.test('loops and starts without a click', async (t) => {
  for (const rate of RATES) {
    const loop = holdAudioLoop(rate)
    // Across the seam, the step between samples is no bigger than the pad's own steps just before it.
    const padSteps = maxStep(loop.subarray(loop.length - rate / 2))
    const seam = Math.abs(loop[0]! - loop[loop.length - 1]!)
    t.ok(seam <= padSteps, `${rate} Hz: seam step ${seam} <= pad step ${padSteps}`)
    t.ok(Math.abs(loop[0]!) <= padSteps, `${rate} Hz: starts at ${loop[0]}, near zero`)
    // The attack is a ramp, not a step: the first millisecond of a chime stays far below its peak.
    const firstMs = loop.subarray(0, rate / 1000)
    t.ok(peakOf(firstMs) < peakOf(loop) / 4, `${rate} Hz: first ms peaks at ${peakOf(firstMs)}`)
  }
})

t.test('8 and 16 kHz are the same sound: frame levels within 0.5 dB', async (t) => {
  let worst = 0
  for (let i = 0; i < HOLD_PERIOD_FRAMES; i++) {
    worst = Math.max(worst, Math.abs(dbfs(rmsOf(holdAudioFrame(8000, i))) - dbfs(rmsOf(holdAudioFrame(16000, i)))))
  }
  t.ok(worst < 0.5, `largest difference ${worst.toFixed(2)} dB`)
})
