/**
 * Paces the caller's audio into 20 ms (160-byte) mu-law frames, scheduled against a start time so
 * the stream does not drift however late individual timers fire.
 */
import { performance } from 'node:perf_hooks'
import { setImmediate as yieldToLoop } from 'node:timers/promises'

/** Bytes in one 20 ms mu-law 8 kHz frame. */
export const FRAME_BYTES = 160
/** Duration of one frame. */
export const FRAME_MS = 20
/** Mu-law encoding of silence. */
export const MULAW_SILENCE = 0xff

/** Options of a `CallerAudio` pacer. */
export interface CallerAudioOptions {
  /** Sends one frame; `index` counts from 0 over the whole call. */
  readonly sendFrame: (frame: Buffer, index: number) => void
  /** Real-time pacing (default) or as fast as the socket takes it. */
  readonly realtime: boolean
  /** Keep sending silence while no audio is queued (what a real phone does). Real time only. */
  readonly silenceWhenIdle: boolean
}

/** Caller-audio pacer; queue audio with `send`, stop with `close`. */
export class CallerAudio {
  readonly #opts: CallerAudioOptions
  #queue: Buffer[] = []
  #queuedBytes = 0
  #offset = 0
  #frames = 0
  #startAt = 0
  #timer: NodeJS.Timeout | undefined
  #running = false
  #closed = false
  #waiters: { frames: number; resolve: () => void }[] = []
  #queuedFrames = 0
  /** For each `send`, when its first frame was due (the pacer's schedule) and went out; performance.now() ms. */
  readonly starts: { frame: number; dueAt: number; sentAt: number }[] = []

  constructor(options: CallerAudioOptions) {
    this.#opts = options
  }

  /** Frames sent so far. */
  get framesSent(): number {
    return this.#frames
  }

  /** Queue audio (padded with silence to whole frames); resolves once its last frame is sent. */
  send(audio: Buffer): Promise<void> {
    if (this.#closed) return Promise.resolve()
    const frames = Math.ceil(audio.length / FRAME_BYTES)
    if (frames === 0) return Promise.resolve()
    const padded = audio.length === frames * FRAME_BYTES ? audio : padToFrames(audio, frames)
    this.#queue.push(padded)
    this.#queuedBytes += padded.length
    this.#queuedFrames += frames
    const done = new Promise<void>((resolve) => this.#waiters.push({ frames: this.#framesAfterQueue(), resolve }))
    this.#start()
    return done
  }

  /** Begin the idle-silence stream right away (real-time phones send from the first moment). */
  startSilence(): void {
    if (this.#opts.realtime && this.#opts.silenceWhenIdle) this.#start()
  }

  /** Stop sending. Pending `send` promises resolve. Idempotent. */
  close(): void {
    this.#closed = true
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
    for (const w of this.#waiters.splice(0)) w.resolve()
  }

  #framesAfterQueue(): number {
    // Sent + still queued = index after which this audio is fully out.
    return this.#frames + this.#queuedFrames
  }

  #start(): void {
    if (this.#running || this.#closed) return
    this.#running = true
    // Re-anchor the clock so a pause (idle, non-silence mode) is not "caught up" in a burst.
    this.#startAt = performance.now() - this.#frames * FRAME_MS
    if (this.#opts.realtime) this.#tick()
    else void this.#burst()
  }

  #tick(): void {
    this.#timer = undefined
    if (this.#closed) return
    if (this.#queuedBytes === 0 && !this.#opts.silenceWhenIdle) {
      this.#running = false
      return
    }
    this.#sendNext()
    const due = this.#startAt + this.#frames * FRAME_MS
    this.#timer = setTimeout(() => this.#tick(), Math.max(0, due - performance.now()))
  }

  async #burst(): Promise<void> {
    while (!this.#closed && this.#queuedBytes > 0) {
      this.#sendNext()
      if (this.#frames % 25 === 0) await yieldToLoop()
    }
    this.#running = false
  }

  #sendNext(): void {
    let frame: Buffer
    const head = this.#queue[0]
    if (head === undefined) {
      frame = Buffer.alloc(FRAME_BYTES, MULAW_SILENCE)
    } else {
      if (this.#offset === 0) {
        this.starts.push({ frame: this.#frames, dueAt: this.#startAt + this.#frames * FRAME_MS, sentAt: performance.now() })
      }
      frame = head.subarray(this.#offset, this.#offset + FRAME_BYTES)
      this.#offset += FRAME_BYTES
      this.#queuedBytes -= FRAME_BYTES
      this.#queuedFrames--
      if (this.#offset >= head.length) {
        this.#queue.shift()
        this.#offset = 0
      }
    }
    const index = this.#frames++
    this.#opts.sendFrame(frame, index)
    while (this.#waiters.length > 0 && (this.#waiters[0]?.frames ?? Infinity) <= this.#frames) {
      this.#waiters.shift()?.resolve()
    }
  }
}

function padToFrames(audio: Buffer, frames: number): Buffer {
  const out = Buffer.alloc(frames * FRAME_BYTES, MULAW_SILENCE)
  audio.copy(out)
  return out
}
