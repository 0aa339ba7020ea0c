/**
 * The audio formats voxgate moves, always mono, named as the TTS vendor's `output_format` names them: the codec
 * (`ulaw`: G.711 mu-law, one byte a sample; `pcm`: 16-bit little-endian linear PCM), then the sample rate.
 */
export type AudioFormat = 'ulaw_8000' | 'pcm_8000' | 'pcm_16000'

/** Audio a transport receives from callers: mu-law 8 kHz (carrier) or PCM16 8 kHz (browser). */
export type InputAudioFormat = 'ulaw_8000' | 'pcm_8000'

/** Audio a transport delivers to callers, as TTS produces it: mu-law 8 kHz (carrier) or PCM16 16 kHz (browser). */
export type OutputAudioFormat = 'ulaw_8000' | 'pcm_16000'

/** What a format is made of. */
export interface AudioFormatInfo {
  codec: 'ulaw' | 'pcm'
  sampleRate: 8000 | 16000
  bytesPerSample: 1 | 2
  /** The byte that encodes silence (mu-law's zero is 0xff), for padding. */
  silenceByte: number
}

/** Codec, rate and sizes of each {@link AudioFormat}. */
export const AUDIO_FORMATS: Readonly<Record<AudioFormat, Readonly<AudioFormatInfo>>> = {
  ulaw_8000: { codec: 'ulaw', sampleRate: 8000, bytesPerSample: 1, silenceByte: 0xff },
  pcm_8000: { codec: 'pcm', sampleRate: 8000, bytesPerSample: 2, silenceByte: 0 },
  pcm_16000: { codec: 'pcm', sampleRate: 16000, bytesPerSample: 2, silenceByte: 0 },
}

/** Bytes per second of audio in `format`. */
export function bytesPerSecond(format: AudioFormat): number {
  const info = AUDIO_FORMATS[format]
  return info.sampleRate * info.bytesPerSample
}
