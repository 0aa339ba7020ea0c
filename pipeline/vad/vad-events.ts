/** A speech segment's position: sample offsets (at the input rate) from the start of the stream, and ms. */
export interface VadSpan {
  /** Start of the first speech frame. */
  startSample: number
  /** End of the last speech frame (before the redemption frames that ended the segment). */
  endSample: number
  startMs: number
  endMs: number
  /** Start of the segment's audio, including pre-speech pad. */
  audioStartSample: number
  /** End of the segment's audio, including the redemption frames. */
  audioEndSample: number
  /** Frames at or above the positive threshold. */
  speechFrames: number
}

/** Events of one call's VAD, delivered in order through `onEvent`. */
export type VadEvent =
  | { type: 'frame'; index: number; probability: number; isSpeech: boolean }
  | { type: 'speech_start'; index: number; startSample: number; startMs: number }
  | { type: 'speech_real_start'; index: number; startSample: number; startMs: number }
  | ({ type: 'speech_end'; audio?: Int16Array } & VadSpan)
  | ({ type: 'misfire' } & VadSpan)
  /** Gated audio for STT (only with `gateAudio`): a view valid during the callback only. */
  | { type: 'audio'; samples: Int16Array; startSample: number }
  | { type: 'error'; error: Error }
