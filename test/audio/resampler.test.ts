import t from 'tap'
import { Resampler, resample } from '../../pipeline/audio/resampler.js'
import { rms, snrDb, sweep, tone, toInt16 } from '../fixtures/audio/signals.js'

const EDGE = 400 // samples ignored at each end (filter ramp-in/out against the zero-padded edges)

// Sweeps stay inside the passband: up to 3 kHz when 8 kHz is involved (flat to ~3.2 kHz), else 0.75 x Nyquist.
const ROUND_TRIPS: [number, number, number][] = [
  [8000, 16000, 3000],
  [8000, 22050, 3000],
  [8000, 24000, 3000],
  [16000, 22050, 6000],
  [16000, 24000, 6000],
  [22050, 24000, 8000],
]

for (const [a, b, fmax] of ROUND_TRIPS) {
  t.test(`${a} -> ${b} -> ${a} round trip of a 50 Hz - ${fmax} Hz sweep: SNR >= 70 dB`, async (t) => {
    const x = sweep(50, fmax, a, a * 2)
    const y = resample(resample(x, a, b), b, a)
    t.equal(y.length, x.length)
    const snr = snrDb(x, y, EDGE)
    t.ok(snr >= 70, `SNR ${snr.toFixed(1)} dB`)
  })
}

// One-way conversions: compare with the same sweep synthesised directly at the target rate.
const ONE_WAY: [number, number, number][] = [
  [24000, 16000, 6000],
  [22050, 8000, 3000],
  [16000, 8000, 3000],
  [24000, 8000, 3000],
  [22050, 16000, 6000],
  [8000, 16000, 3000],
]

for (const [a, b, fmax] of ONE_WAY) {
  t.test(`${a} -> ${b} matches the sweep synthesised at ${b} Hz: SNR >= 75 dB`, async (t) => {
    const seconds = 1
    const y = resample(sweep(50, fmax, a, a * seconds), a, b)
    const ref = sweep(50, fmax, b, b * seconds)
    t.equal(y.length, ref.length)
    const snr = snrDb(ref, y, EDGE)
    t.ok(snr >= 75, `SNR ${snr.toFixed(1)} dB`)
  })
}

const STOPBAND: [number, number, number][] = [
  [16000, 8000, 5000],
  [16000, 8000, 4300],
  [22050, 8000, 5000],
  [24000, 8000, 6000],
  [24000, 16000, 9000],
  [22050, 16000, 9000],
]

for (const [a, b, f] of STOPBAND) {
  t.test(`${a} -> ${b}: a ${f} Hz tone (above the new Nyquist) is attenuated >= 70 dB`, async (t) => {
    const x = tone(f, a, a)
    const y = resample(x, a, b)
    const att = 20 * Math.log10(rms(x, EDGE) / rms(y, EDGE))
    t.ok(att >= 70, `attenuation ${att.toFixed(1)} dB`)
  })
}

t.test('16k -> 8k passband: 1 kHz and 3 kHz within 0.1 dB', async (t) => {
  for (const f of [1000, 3000]) {
    const x = tone(f, 16000, 16000)
    const gain = 20 * Math.log10(rms(resample(x, 16000, 8000), EDGE) / rms(x, EDGE))
    t.ok(Math.abs(gain) < 0.1, `${f} Hz gain ${gain.toFixed(3)} dB`)
  }
})

t.test('streaming with odd chunk sizes equals one-shot, for Int16 and Float32', async (t) => {
  for (const [a, b] of [
    [8000, 22050],
    [22050, 8000],
    [24000, 16000],
  ] as const) {
    const x = toInt16(sweep(50, 3000, a, a))
    const one = resample(x, a, b)
    const r = new Resampler({ from: a, to: b })
    const got: number[] = []
    let off = 0
    let k = 0
    while (off < x.length) {
      const n = Math.min(x.length - off, ((k++ * 97) % 331) + 1)
      got.push(...r.processInt16(x.subarray(off, off + n)))
      off += n
    }
    got.push(...r.flushInt16())
    t.equal(got.length, one.length, `${a}->${b} length`)
    t.same(got, [...one], `${a}->${b} samples`)
  }
})

t.test('flush resets the stream; latency is reported; same rate copies', async (t) => {
  const r = new Resampler({ from: 8000, to: 16000 })
  t.ok(r.latencySamples > 0 && r.latencySamples < 64)
  const x = toInt16(tone(440, 8000, 800))
  const a = [...r.processInt16(x), ...r.flushInt16()]
  const b = [...r.processInt16(x), ...r.flushInt16()]
  t.same(a, b)
  t.equal(a.length, 1600)
  const same = resample(x, 8000, 8000)
  t.same([...same], [...x])
  t.not(same, x)
  t.throws(() => new Resampler({ from: 0, to: 8000 }), RangeError)
})
