/**
 * What the caller hears while a warm transfer dials and briefs the human: with a `hold` line, the line in the
 * agent's voice, then the agent's hold music (`transfer.hold_audio_url`, hold-music.ts) or the built-in hold
 * audio; without one, the ringback tone of the caller's country, as on any
 * call that rings (ringback-tone.ts). Paced a little ahead of real time into the caller's transport and dropped with
 * a clear when the hold ends. Shared by every `WarmTransferIo` (carrier, SIP): only the caller's side is used.
 *
 * Early media from the human's leg (a SIP trunk's 180/183 with SDP: an announcement, a queue's ringback) replaces
 * the ringback tone from its first frame, as a phone network plays the far end's early media instead of its own
 * ringback. Under a `hold` line the caller stays on hold audio: the caller was told to hold, not that it rings.
 */
import { encodeMulaw, int16ToBuffer, type OutputAudioFormat } from '../../pipeline/index.js'
import type { Log } from '../../core/log.js'
import { BRIDGE_FRAME_MS, createFrameConverter, type FrameConverter, frameBytes } from './frame-converter.js'
import { HOLD_FRAME_MS, holdAudioFrame } from './hold-audio.js'
import { type HoldMusic, holdMusicFrame } from './hold-music.js'
import { RINGBACK_FRAME_MS, type RingbackPlan, ringbackFrame, ringbackPlanFor } from './ringback-tone.js'

/** How far ahead of real time hold audio is sent (the transport queues it; a clear drops the rest). */
const HOLD_LEAD_MS = 200
/** How often the hold pacer tops the caller's queue up. */
const HOLD_TICK_MS = 100

/** The caller's side of a transfer, as the hold needs it. */
export interface CallerHoldSide {
  readonly log: Log
  readonly callerAudio: { readonly output: OutputAudioFormat }
  /** Plays raw audio in the caller's output format to the caller, in order (no marks). */
  playToCaller(audio: Buffer): void
  /** Drops what the caller has queued and not heard. */
  clearCaller(): void
  /** The agent's voice for the caller, in the caller's output format. */
  speakToCaller(text: string, signal: AbortSignal, onAudio?: (audio: Buffer) => void): Promise<Buffer>
  /** The caller is on hold (`on`) or not any more: the session's clocks and recording are told. */
  held?(on: boolean): void
  /** The caller's number (E.164), whose country's ringback is played; undefined: the ITU tone. */
  readonly callerId?: string | undefined
  /** The agent's hold music once loaded (`transfer.hold_audio_url`); undefined: the built-in hold audio. */
  holdMusic?(): HoldMusic | undefined
}

/** The hold of one transfer: `start` once, `stop` (idempotent) when the hold ends. */
export class CallerHold {
  readonly #side: CallerHoldSide
  #timer: NodeJS.Timeout | undefined
  #holding = false
  /** Without a hold line: the ringback played instead of the hold audio. */
  #ringback: RingbackPlan | undefined
  /** The leg's early media is playing (instead of the ringback): its frames in the caller's format. */
  #early: FrameConverter | undefined

  constructor(side: CallerHoldSide) {
    this.#side = side
  }

  /** Says `line` then plays hold audio until `stop`; without a line, plays the caller's ringback tone. */
  start(line: string | undefined, signal: AbortSignal): void {
    this.#holding = true
    this.#side.held?.(true)
    this.#ringback = line === undefined ? ringbackPlanFor(this.#side.callerId) : undefined
    const play = async () => {
      let leadMs = 0
      if (line !== undefined) {
        // Hold audio starts at once, so the caller never waits in silence for the line's first audio (the speech
        // vendor's time to first byte); it gives way to the line as it comes, and follows where the line ends.
        this.#startAudio(0)
        let firstAt: number | undefined
        let queuedMs = 0
        const bytesPerMs = frameBytes(this.#side.callerAudio.output) / BRIDGE_FRAME_MS
        const onAudio = (audio: Buffer) => {
          if (!this.#holding) return
          if (firstAt === undefined) {
            firstAt = performance.now()
            this.#stopAudio()
            this.#side.clearCaller()
          }
          queuedMs += audio.length / bytesPerMs
          this.#side.playToCaller(audio)
        }
        try {
          await this.#side.speakToCaller(line, signal, onAudio)
          if (!this.#holding) return
          // Nothing came of the line: the hold audio started at once just goes on.
          if (firstAt === undefined) return
          leadMs = Math.max(0, firstAt + queuedMs - performance.now())
        } catch (err) {
          if (signal.aborted || !this.#holding) return
          this.#side.log.warn({ err }, 'warm transfer: the hold line could not be spoken; hold audio goes on')
          if (firstAt === undefined) return
        }
      }
      if (this.#holding) this.#startAudio(leadMs)
    }
    void play()
  }

  /**
   * A 20 ms frame (mu-law 8 kHz) of the human's leg before the answer: played to the caller in place of the ringback
   * from the first one on, until the hold ends; ignored under a `hold` line. Not recorded, as hold audio is not.
   */
  earlyMedia(frame: Uint8Array): void {
    if (!this.#holding || this.#ringback === undefined) return
    if (this.#early === undefined) {
      this.#stopAudio()
      this.#side.clearCaller()
      this.#early = createFrameConverter('ulaw_8000', this.#side.callerAudio.output)
      this.#side.log.info('warm transfer: the human leg has early media; it replaces the ringback')
    }
    for (const out of this.#early.push(frame)) this.#side.playToCaller(Buffer.from(out))
  }

  /** Ends the hold: the pacer stops and what the caller has queued is dropped. */
  stop(): void {
    if (!this.#holding) return
    this.#holding = false
    this.#early = undefined
    this.#stopAudio()
    this.#side.clearCaller()
    this.#side.held?.(false)
  }

  /** Hold audio, paced: the caller's queue is topped up to `HOLD_LEAD_MS` ahead of real time. */
  #startAudio(alreadyQueuedMs: number): void {
    const started = performance.now()
    let sentMs = alreadyQueuedMs
    let frame = 0
    const tick = () => {
      if (!this.#holding) return
      const due = performance.now() - started + HOLD_LEAD_MS
      const frames: Buffer[] = []
      const ringback = this.#ringback
      const music = this.#side.holdMusic?.()
      while (sentMs < due) {
        const format = this.#side.callerAudio.output
        frames.push(
          ringback !== undefined
            ? ringbackFrameIn(ringback, format, frame++)
            : music !== undefined
              ? musicFrameIn(music, format, frame++)
              : holdFrameIn(format, frame++),
        )
        sentMs += ringback === undefined ? HOLD_FRAME_MS : RINGBACK_FRAME_MS
      }
      if (frames.length > 0) this.#side.playToCaller(Buffer.concat(frames))
    }
    tick()
    this.#timer = setInterval(tick, HOLD_TICK_MS)
    this.#timer.unref()
  }

  #stopAudio(): void {
    clearInterval(this.#timer)
    this.#timer = undefined
  }
}

/** One 20 ms frame of the agent's hold music in the caller's output format. */
function musicFrameIn(music: HoldMusic, format: OutputAudioFormat, index: number): Buffer {
  if (format === 'ulaw_8000') return Buffer.from(encodeMulaw(holdMusicFrame(music, 8000, index)))
  return Buffer.from(int16ToBuffer(holdMusicFrame(music, 16000, index)))
}

/** One 20 ms frame of ringback in the caller's output format. */
function ringbackFrameIn(plan: RingbackPlan, format: OutputAudioFormat, index: number): Buffer {
  if (format === 'ulaw_8000') return Buffer.from(encodeMulaw(ringbackFrame(plan, 8000, index)))
  return Buffer.from(int16ToBuffer(ringbackFrame(plan, 16000, index)))
}

/** One 20 ms frame of hold audio in the caller's output format: mu-law 8 kHz, or PCM16 16 kHz (a browser). */
function holdFrameIn(format: OutputAudioFormat, index: number): Buffer {
  if (format === 'ulaw_8000') return Buffer.from(encodeMulaw(holdAudioFrame(8000, index)))
  // A copy: the frame is a view of the shared hold loop.
  return Buffer.from(int16ToBuffer(holdAudioFrame(16000, index)))
}
