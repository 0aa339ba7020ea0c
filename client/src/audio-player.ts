/** Called when the audio queued for an assistant turn has been played out. */
export type DrainHandler = (turnId: string) => void

interface Scheduled {
  source: AudioBufferSourceNode
  turnId: string
  startAt: number
  duration: number
}

/** Small lead so the first chunk is not scheduled in the past. */
const START_LEAD_S = 0.03

/**
 * Gapless playback of PCM16 16 kHz chunks: each chunk becomes an AudioBufferSourceNode started exactly when the
 * previous one ends. `stop()` (barge-in) silences everything at once and clears the queue.
 */
export class AudioPlayer {
  readonly #context: AudioContext
  readonly #onDrain: DrainHandler
  readonly #onPlayed: (ms: number) => void
  readonly #scheduled = new Set<Scheduled>()
  #nextStart = 0
  #lastTurnId: string | undefined

  constructor(context: AudioContext, handlers: { onDrain: DrainHandler; onPlayed: (ms: number) => void }) {
    this.#context = context
    this.#onDrain = handlers.onDrain
    this.#onPlayed = handlers.onPlayed
  }

  /** True while audio is playing or queued. */
  get playing(): boolean {
    return this.#scheduled.size > 0
  }

  /** The assistant turn whose audio was queued last. */
  get turnId(): string | undefined {
    return this.#lastTurnId
  }

  /** Queue a chunk of float samples at `sampleRate` right after what is already queued. */
  enqueue(samples: Float32Array<ArrayBuffer>, sampleRate: number, turnId: string): void {
    if (samples.length === 0) return
    const buffer = this.#context.createBuffer(1, samples.length, sampleRate)
    buffer.copyToChannel(samples, 0)
    const source = this.#context.createBufferSource()
    source.buffer = buffer
    source.connect(this.#context.destination)
    const startAt = Math.max(this.#nextStart, this.#context.currentTime + START_LEAD_S)
    const item: Scheduled = { source, turnId, startAt, duration: buffer.duration }
    source.onended = () => this.#ended(item)
    source.start(startAt)
    this.#nextStart = startAt + buffer.duration
    this.#scheduled.add(item)
    this.#lastTurnId = turnId
  }

  /** Stop now and drop the queue; returns the turn that was playing, if any. No drain callback follows. */
  stop(): string | undefined {
    if (this.#scheduled.size === 0) return undefined
    const now = this.#context.currentTime
    const turnId = this.#lastTurnId
    for (const item of this.#scheduled) {
      item.source.onended = null
      const played = Math.min(item.duration, Math.max(0, now - item.startAt))
      if (played > 0) this.#onPlayed(played * 1000)
      try {
        item.source.stop()
      } catch (error) {
        // stop() throws only for a source that never started; nothing to silence then.
        void error
      }
      item.source.disconnect()
    }
    this.#scheduled.clear()
    this.#nextStart = 0
    return turnId
  }

  #ended(item: Scheduled): void {
    if (!this.#scheduled.delete(item)) return
    item.source.disconnect()
    this.#onPlayed(item.duration * 1000)
    if (this.#scheduled.size === 0) this.#onDrain(item.turnId)
  }
}
