import t from 'tap'
import { DEFAULT_VAD_OPTIONS, VAD_OPTION_BOUNDS, resolveVadOptions } from '../../pipeline/vad/vad-options.js'

t.test('defaults are vad-web v5 thresholds and frame counts clamped to the SPEC bounds', async (t) => {
  const o = resolveVadOptions()
  t.same(o, DEFAULT_VAD_OPTIONS)
  t.equal(o.positiveSpeechThreshold, 0.3)
  t.equal(o.negativeSpeechThreshold, 0.25)
  t.equal(o.frameSamples, 512)
  t.equal(o.bufferFrames, 10)
  for (const [k, b] of Object.entries(VAD_OPTION_BOUNDS)) {
    const v = o[k as keyof typeof VAD_OPTION_BOUNDS]
    t.ok(v >= b.min && v <= b.max, `${k} default within bounds`)
  }
})

t.test('bounds match the SPEC', async (t) => {
  t.same(VAD_OPTION_BOUNDS, {
    positiveSpeechThreshold: { min: 0, max: 1 },
    negativeSpeechThreshold: { min: 0, max: 1 },
    redemptionFrames: { min: 0, max: 10 },
    minSpeechFrames: { min: 0, max: 10 },
    preSpeechPadFrames: { min: 0, max: 10 },
    bufferFrames: { min: 0, max: 20 },
  })
})

t.test('out-of-bounds and non-integer options are rejected with a code', async (t) => {
  t.throws(() => resolveVadOptions({ redemptionFrames: 11 }), { code: 'invalid_vad_options' })
  t.throws(() => resolveVadOptions({ bufferFrames: 21 }), { code: 'invalid_vad_options' })
  t.throws(() => resolveVadOptions({ positiveSpeechThreshold: 1.1 }), { code: 'invalid_vad_options' })
  t.throws(() => resolveVadOptions({ minSpeechFrames: 2.5 }), { code: 'invalid_vad_options' })
  t.throws(() => resolveVadOptions({ frameSamples: 1536 }), { code: 'invalid_vad_options' })
  t.equal(resolveVadOptions({ bufferFrames: 20, redemptionFrames: 0 }).bufferFrames, 20)
})
