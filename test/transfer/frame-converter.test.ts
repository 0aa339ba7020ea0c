import t from 'tap'
import { createFrameConverter, frameBytes } from '../../gateway/transfer/frame-converter.js'
import type { AudioFormat } from '../../pipeline/audio/audio-format.js'
import { concat, decode, measure, tone, toneFrames } from './bridge-audio-helpers.js'

t.test('frame sizes: 20 ms in each format', async (t) => {
  t.equal(frameBytes('ulaw_8000'), 160)
  t.equal(frameBytes('pcm_8000'), 320)
  t.equal(frameBytes('pcm_16000'), 640)
})

t.test('same format: a whole frame passes through untouched, other sizes are re-cut in order', async (t) => {
  const c = createFrameConverter('ulaw_8000', 'ulaw_8000')
  const frame = tone('ulaw_8000', 440, 20)
  t.equal(c.push(frame)[0], frame, 'the very frame, not a copy')
  t.strictSame(c.push(new Uint8Array(0)), [], 'an empty push gives nothing')
  const audio = tone('ulaw_8000', 440, 100)
  const pieces = [100, 1, 219, 80, 400]
  const c2 = createFrameConverter('ulaw_8000', 'ulaw_8000')
  const out2: Uint8Array[] = []
  let at = 0
  for (const size of pieces) {
    const got = c2.push(audio.subarray(at, at + size))
    at += size
    out2.push(...got)
  }
  t.same(
    out2.map((f) => f.length),
    [160, 160, 160, 160, 160],
    '800 bytes in five odd pieces: five frames',
  )
  t.strictSame(concat(out2), audio)
})

t.test('a 20 ms frame in gives a 20 ms frame out at once, from the very first, with the tone kept', async (t) => {
  const pairs: [AudioFormat, AudioFormat][] = [
    ['ulaw_8000', 'pcm_16000'],
    ['pcm_8000', 'pcm_16000'],
    ['pcm_8000', 'ulaw_8000'],
    ['pcm_16000', 'ulaw_8000'],
    ['ulaw_8000', 'pcm_8000'],
  ]
  for (const [from, to] of pairs) {
    const c = createFrameConverter(from, to)
    const outRate = to === 'pcm_16000' ? 16000 : 8000
    const outs: Uint8Array[] = []
    for (const frame of toneFrames(from, 1000, 25)) {
      const got = c.push(frame)
      t.equal(got.length, 1, `${from} -> ${to}: one frame out per frame in`)
      outs.push(...got)
    }
    t.ok(outs.every((f) => f.length === frameBytes(to)))
    // Skip the first frame (the resampler's lookahead of zeros starts it): the rest is the same 1 kHz tone.
    const m = measure(decode(to, concat(outs.slice(1))), outRate)
    t.ok(Math.abs(m.hz - 1000) < 10, `${from} -> ${to}: ${m.hz.toFixed(0)} Hz`)
    const db = 20 * Math.log10(m.rms / (8000 / Math.SQRT2))
    t.ok(Math.abs(db) < 0.5, `${from} -> ${to}: level within 0.5 dB (${db.toFixed(2)} dB)`)
  }
})

t.test('PCM split inside a sample is joined again', async (t) => {
  const audio = tone('pcm_8000', 700, 40)
  const whole = createFrameConverter('pcm_8000', 'pcm_16000')
  const split = createFrameConverter('pcm_8000', 'pcm_16000')
  const a = whole.push(audio)
  const b = [...split.push(audio.subarray(0, 161)), ...split.push(audio.subarray(161, 333)), ...split.push(audio.subarray(333))]
  t.equal(a.length, 2)
  t.strictSame(concat(b), concat(a))
})
