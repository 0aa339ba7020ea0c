/** Audio primitives: G.711 codecs, PCM16 helpers, WAV, framing and resampling. */
export { decodeAlaw, encodeAlaw } from './g711-alaw.js'
export { decodeMulaw, encodeMulaw } from './g711-mulaw.js'
export { CARRIER_FRAME_SAMPLES_8K, Framer, VAD_FRAME_SAMPLES_8K, type SampleArray } from './framer.js'
export {
  PCM16_SCALE,
  base64ToInt16,
  bufferToInt16,
  deinterleave,
  float32ToInt16,
  int16ToBase64,
  int16ToBuffer,
  int16ToFloat32,
  interleave,
} from './pcm16.js'
export { Resampler, SAMPLE_RATES, resample, type ResamplerOptions } from './resampler.js'
export { DEFAULT_SINC_FILTER, polyphaseFilter, type PolyphaseFilter, type SincFilterOptions } from './sinc-filter.js'
export { WavFormatError, readWav, wavHeader, writeWav, type WavAudio } from './wav.js'
