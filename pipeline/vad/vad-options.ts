/** Per-call VAD options (camelCase mirror of the SPEC's `vad` object, snake_case there). */
export interface VadOptions {
  /** Frame probability at or above which a frame is speech (SPEC `positive_speech_threshold`). */
  positiveSpeechThreshold: number
  /** Probability below which a frame counts towards ending speech (SPEC `negative_speech_threshold`). */
  negativeSpeechThreshold: number
  /** Frames below the negative threshold that end a segment (SPEC `redemption_frames`). */
  redemptionFrames: number
  /** Segments with fewer speech frames are reported as `misfire` (SPEC `min_speech_frames`). */
  minSpeechFrames: number
  /** Frames before the first speech frame included in a segment's audio (SPEC `pre_speech_pad_frames`). */
  preSpeechPadFrames: number
  /** Samples per frame at 16 kHz; Silero v5 accepts only 512 (32 ms) (SPEC `frame_samples`). */
  frameSamples: number
  /** Emit `audio` events carrying only speech (plus `bufferFrames` of lead-in) for STT (SPEC `gate_audio`). */
  gateAudio: boolean
  /**
   * Frames of audio held back while the gate is closed and released, ahead of the first speech frame, when
   * speech starts, so STT hears the onset the VAD needed to notice it (SPEC `buffer_frames`).
   */
  bufferFrames: number
}

/** Inclusive numeric bounds of each option, mirrored by the config schema. */
export const VAD_OPTION_BOUNDS = {
  positiveSpeechThreshold: { min: 0, max: 1 },
  negativeSpeechThreshold: { min: 0, max: 1 },
  redemptionFrames: { min: 0, max: 10 },
  minSpeechFrames: { min: 0, max: 10 },
  preSpeechPadFrames: { min: 0, max: 10 },
  bufferFrames: { min: 0, max: 20 },
} as const satisfies Partial<Record<keyof VadOptions, { min: number; max: number }>>

/** The only frame size Silero v5 accepts, in samples at 16 kHz (256 at 8 kHz): 32 ms. */
export const VAD_FRAME_SAMPLES_ALLOWED = [512] as const

/**
 * Defaults: thresholds are vad-web 0.0.31's v5 defaults (0.3 / 0.25). vad-web gives its other defaults in ms
 * (redemption 1400, pre-speech pad 800, min speech 400), which at 32 ms frames exceed the SPEC bounds, so each
 * is converted to frames and clamped to its bound: 10 / 10 / 10.
 */
export const DEFAULT_VAD_OPTIONS: Readonly<VadOptions> = Object.freeze({
  positiveSpeechThreshold: 0.3,
  negativeSpeechThreshold: 0.25,
  redemptionFrames: 10,
  minSpeechFrames: 4,
  preSpeechPadFrames: 10,
  frameSamples: 512,
  gateAudio: true,
  bufferFrames: 10,
})

/** Thrown for out-of-bounds VAD options; `code` is stable. */
export class VadOptionsError extends RangeError {
  readonly code = 'invalid_vad_options'
  constructor(message: string) {
    super(message)
    this.name = 'VadOptionsError'
  }
}

/** Merge `partial` over the defaults and check every bound; throws `VadOptionsError`. */
export function resolveVadOptions(partial: Partial<VadOptions> = {}): VadOptions {
  const o: VadOptions = { ...DEFAULT_VAD_OPTIONS }
  for (const [k, v] of Object.entries(partial) as [keyof VadOptions, VadOptions[keyof VadOptions] | undefined][]) {
    if (v !== undefined) (o as unknown as Record<string, unknown>)[k] = v
  }
  for (const [k, b] of Object.entries(VAD_OPTION_BOUNDS) as [keyof typeof VAD_OPTION_BOUNDS, { min: number; max: number }][]) {
    const v = o[k]
    if (typeof v !== 'number' || !Number.isFinite(v) || v < b.min || v > b.max) {
      throw new VadOptionsError(`vad ${k} must be between ${b.min} and ${b.max}, got ${String(v)}`)
    }
    if (k !== 'positiveSpeechThreshold' && k !== 'negativeSpeechThreshold' && !Number.isInteger(v)) {
      throw new VadOptionsError(`vad ${k} must be an integer, got ${v}`)
    }
  }
  if (!(VAD_FRAME_SAMPLES_ALLOWED as readonly number[]).includes(o.frameSamples)) {
    throw new VadOptionsError(`vad frameSamples must be one of ${VAD_FRAME_SAMPLES_ALLOWED.join(', ')}, got ${o.frameSamples}`)
  }
  return o
}
