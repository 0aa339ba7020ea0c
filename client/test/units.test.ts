// Pure parts of the browser SDK, run in Node: `npx tap client/test/*.test.ts`.
import t from 'tap'
import { Downsampler } from '../src/downsampler.js'
import { base64ToFloat, floatToInt16, int16ToBase64, rms } from '../src/pcm16.js'
import { UserTranscriptAssembler } from '../src/transcript.js'

function sine(rate: number, hz: number, seconds: number, amplitude = 0.5): Float32Array {
  const out = new Float32Array(Math.round(rate * seconds))
  for (let i = 0; i < out.length; i++) out[i] = amplitude * Math.sin((2 * Math.PI * hz * i) / rate)
  return out
}

/** Feed in render-quantum-sized blocks like the worklet does, collecting all output. */
function downsample(rate: number, input: Float32Array, block = 1024): Float32Array {
  const d = new Downsampler(rate, 8000)
  const parts: Float32Array[] = []
  for (let i = 0; i < input.length; i += block) parts.push(d.process(input.subarray(i, i + block)))
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0))
  let o = 0
  for (const p of parts) {
    out.set(p, o)
    o += p.length
  }
  return out
}

for (const rate of [48_000, 44_100, 16_000]) {
  t.test(`downsampler ${rate} -> 8000: length, passband, stopband`, async (t) => {
    const out = downsample(rate, sine(rate, 1000, 1))
    // The 63-tap filter holds back 64 input samples until more audio arrives.
    t.ok(out.length <= 8000 && out.length >= 8000 - Math.ceil((64 * 8000) / rate), `~8000 samples per second (${out.length})`)
    const settled = out.subarray(100, out.length - 100)
    t.ok(Math.abs(rms(settled) - 0.5 / Math.SQRT2) < 0.01, `1 kHz passes at unity gain (rms ${rms(settled).toFixed(3)})`)
    // A correct 1 kHz sine at 8 kHz repeats every 8 samples.
    let err = 0
    for (let i = 100; i < 7800; i++) err = Math.max(err, Math.abs(out[i]! - out[i + 8]!))
    t.ok(err < 0.01, `waveform is a clean 1 kHz sine (max period error ${err.toFixed(4)})`)
    if (rate > 8000) {
      const aliased = downsample(rate, sine(rate, 6000, 1)).subarray(100, 7900)
      t.ok(rms(aliased) < 0.01, `6 kHz (would alias to 2 kHz) is removed: rms ${rms(aliased).toFixed(4)}`)
    }
  })
}

t.test('pcm16 base64 round trip, little-endian', async (t) => {
  const samples = new Int16Array([0, 1, -1, 32767, -32768, 256])
  const b64 = int16ToBase64(samples)
  t.equal(b64, Buffer.from(new Uint8Array(samples.buffer)).toString('base64'))
  t.same(
    Array.from(base64ToFloat(b64), (v) => Math.round(v * 32768)),
    Array.from(samples),
  )
  t.same(Array.from(floatToInt16(new Float32Array([1.5, -2, 0.5]))), [32767, -32768, 16384])
})

t.test('user transcript: interim replaced per counter, delta stabilises, later counters append, final wins', async (t) => {
  const a = new UserTranscriptAssembler()
  t.match(a.interim('user-1', 0, 'hel'), { text: 'hel', stable: '', interim: 'hel', final: false })
  t.match(a.interim('user-1', 0, 'hello wor'), { text: 'hello wor', interim: 'hello wor' })
  t.match(a.delta('user-1', 0, 'hello world'), { text: 'hello world', stable: 'hello world', interim: '' })
  t.match(a.interim('user-1', 0, 'stale'), { text: 'hello world' }, 'a late interim for a stabilised counter is ignored')
  t.match(a.interim('user-1', 1, 'how'), { text: 'hello world how', stable: 'hello world', interim: 'how' })
  t.match(a.interim('user-1', 1, 'how are you'), { text: 'hello world how are you' })
  t.match(a.delta('user-1', 1, 'how are you?'), { text: 'hello world how are you?', interim: '' })
  t.match(a.final('user-1', 'Hello world, how are you?'), { text: 'Hello world, how are you?', final: true })
  t.match(a.interim('user-1', 2, 'late'), { text: 'Hello world, how are you?', final: true })
  t.match(a.interim('user-2', 0, 'next'), { turnId: 'user-2', text: 'next' }, 'turns are separate')
})
