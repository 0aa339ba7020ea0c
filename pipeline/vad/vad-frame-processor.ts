import type { VadOptions } from './vad-options.js'

/** Bit flags returned by `VadFrameProcessor.process`. */
export const VadFrameResult = {
  NONE: 0,
  SPEECH_START: 1,
  /** `minSpeechFrames` speech frames seen in this segment: it will not be a misfire. */
  SPEECH_REAL_START: 2,
  SPEECH_END: 4,
  MISFIRE: 8,
} as const

/** A finished (or started) segment, in frame indices. */
export interface VadSegmentFrames {
  /** First frame whose audio belongs to the segment (speech start minus pre-speech pad). */
  audioStart: number
  /** First frame at or above the positive threshold. */
  firstSpeech: number
  /** Last frame at or above the positive threshold. */
  lastSpeech: number
  /** Frame on which the segment ended (last frame of its audio). */
  end: number
  /** Frames at or above the positive threshold. */
  speechFrames: number
}

/**
 * vad-web's FrameProcessor algorithm over frame indices and probabilities, with no audio and no I/O:
 * a frame >= positive threshold starts (or continues) speech; `redemptionFrames` frames below the negative
 * threshold end it; a segment with fewer than `minSpeechFrames` speech frames is a misfire; segment audio
 * starts `preSpeechPadFrames` before the first speech frame but never before the previous segment's end.
 */
export class VadFrameProcessor {
  readonly #o: Pick<
    VadOptions,
    'positiveSpeechThreshold' | 'negativeSpeechThreshold' | 'redemptionFrames' | 'minSpeechFrames' | 'preSpeechPadFrames'
  >
  #isSpeaking = false
  #redemption = 0
  #realStartFired = false
  #idleFrom = 0
  /** The current segment while speaking; the last ended one after SPEECH_END / MISFIRE. */
  readonly segment: VadSegmentFrames = { audioStart: 0, firstSpeech: 0, lastSpeech: 0, end: 0, speechFrames: 0 }

  constructor(
    options: Pick<
      VadOptions,
      'positiveSpeechThreshold' | 'negativeSpeechThreshold' | 'redemptionFrames' | 'minSpeechFrames' | 'preSpeechPadFrames'
    >,
  ) {
    this.#o = { ...options }
  }

  /** True between SPEECH_START and SPEECH_END / MISFIRE. */
  get speaking(): boolean {
    return this.#isSpeaking
  }

  /** First frame a new segment's audio may include (the frame after the previous segment's end). */
  get floor(): number {
    return this.#idleFrom
  }

  /** Whether `probability` counts as a speech frame. */
  isSpeech(probability: number): boolean {
    return probability >= this.#o.positiveSpeechThreshold
  }

  /** Feed frame `index` (consecutive from 0) with its probability; returns `VadFrameResult` flags. */
  process(index: number, probability: number): number {
    const o = this.#o
    const seg = this.segment
    let result: number = VadFrameResult.NONE
    const speech = probability >= o.positiveSpeechThreshold
    if (speech && !this.#isSpeaking) {
      this.#isSpeaking = true
      this.#redemption = 0
      this.#realStartFired = false
      seg.firstSpeech = index
      seg.audioStart = Math.max(index - o.preSpeechPadFrames, this.#idleFrom)
      seg.speechFrames = 0
      result |= VadFrameResult.SPEECH_START
    }
    if (speech) {
      seg.speechFrames++
      seg.lastSpeech = index
      this.#redemption = 0
      if (!this.#realStartFired && seg.speechFrames >= o.minSpeechFrames) {
        this.#realStartFired = true
        result |= VadFrameResult.SPEECH_REAL_START
      }
    } else if (this.#isSpeaking && probability < o.negativeSpeechThreshold && ++this.#redemption >= o.redemptionFrames) {
      result |= this.#finish(index)
    }
    return result
  }

  /** End of input (or pause): close an open segment at frame `lastIndex`. Returns SPEECH_END, MISFIRE or NONE. */
  endSegment(lastIndex: number): number {
    if (!this.#isSpeaking) return VadFrameResult.NONE
    return this.#finish(lastIndex)
  }

  /** Forget any open segment. */
  reset(nextIndex = 0): void {
    this.#isSpeaking = false
    this.#redemption = 0
    this.#realStartFired = false
    this.#idleFrom = nextIndex
  }

  #finish(index: number): number {
    this.segment.end = index
    this.#isSpeaking = false
    this.#redemption = 0
    this.#realStartFired = false
    this.#idleFrom = index + 1
    return this.segment.speechFrames >= this.#o.minSpeechFrames ? VadFrameResult.SPEECH_END : VadFrameResult.MISFIRE
  }
}
