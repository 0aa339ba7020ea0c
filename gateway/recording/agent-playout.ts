/**
 * Where agent audio goes on the recording's timeline: at the time the caller heard it. Phone calls know it from
 * the carrier's mark echoes; browsers from a real-time estimate (each chunk plays after the previous one, and not
 * before it was sent). A clear (barge-in) cuts the agent channel at the moment it happened, or at the pause before
 * it: a reply paused for caller speech stopped there.
 */
import type { RecordedAudio, Recorder } from './recording-port.js'

/** Agent audio as the transport sent it and what became of it; times are ms since the session connected. */
export interface AgentPlayout {
  sent(chunkId: number, samples: RecordedAudio, atMs: number): void
  /** The caller heard everything up to and including `chunkId` (carrier mark echo), as of `atMs`. */
  played(chunkId: number, atMs: number): void
  cleared(atMs: number): void
  /** Playout paused at `atMs` for caller speech: a clear that follows cuts here. */
  paused(atMs: number): void
  /** The pause is over: the reply played on. */
  resumed(): void
}

/** Placement by real-time estimate: the browser plays chunks back to back from when each was sent. */
export class EstimatedPlayout implements AgentPlayout {
  readonly #recorder: Recorder
  readonly #rate: number
  #cursorMs = 0
  constructor(recorder: Recorder, sampleRate: number) {
    this.#recorder = recorder
    this.#rate = sampleRate
  }
  sent(_chunkId: number, samples: RecordedAudio, atMs: number): void {
    const start = Math.max(atMs, this.#cursorMs)
    this.#recorder.agent(samples, start)
    this.#cursorMs = start + (samples.length * 1000) / this.#rate
  }
  played(): void {}
  // A browser plays on what it was sent: its pause only holds back audio not sent yet, which is placed when sent.
  paused(): void {}
  resumed(): void {}
  cleared(atMs: number): void {
    this.#recorder.clearAgentAfter(atMs)
    this.#cursorMs = atMs
  }
}

/** Most agent audio awaiting its mark, in samples (2 minutes at 8 kHz); beyond it chunks are placed by estimate. */
const MAX_UNCONFIRMED_SAMPLES = 8000 * 120

interface Unconfirmed {
  chunkId: number
  samples: RecordedAudio
  sentMs: number
}

/**
 * Placement by carrier marks: a chunk is held until its mark comes back, then placed so that it ends when the echo
 * arrived (never before the previous chunk ended, nor before it was sent). At a clear, the chunks still unconfirmed
 * were playing back to back from where the last confirmed one ended, and are cut at the clear.
 */
export class MarkedPlayout implements AgentPlayout {
  readonly #recorder: Recorder
  readonly #rate: number
  #pending: Unconfirmed[] = []
  #pendingSamples = 0
  /** Where the last placed chunk ended, ms. */
  #playedEndMs = 0
  /** Playout paused here (the carrier was cleared then), until resumed. */
  #pausedAtMs: number | undefined
  constructor(recorder: Recorder, sampleRate: number) {
    this.#recorder = recorder
    this.#rate = sampleRate
  }

  sent(chunkId: number, samples: RecordedAudio, atMs: number): void {
    if (this.#pendingSamples + samples.length > MAX_UNCONFIRMED_SAMPLES) {
      // A carrier that stops echoing must not grow memory: the oldest chunk is placed by estimate.
      const oldest = this.#pending.shift()
      if (oldest !== undefined) {
        this.#pendingSamples -= oldest.samples.length
        this.#place(oldest, Math.max(this.#playedEndMs, oldest.sentMs))
      }
    }
    this.#pending.push({ chunkId, samples, sentMs: atMs })
    this.#pendingSamples += samples.length
  }

  played(chunkId: number, atMs: number): void {
    const at = this.#pending.findIndex((p) => p.chunkId === chunkId)
    if (at === -1) return
    const heard = this.#pending.splice(0, at + 1)
    for (const p of heard) this.#pendingSamples -= p.samples.length
    const last = heard.pop() as Unconfirmed
    for (const p of heard) this.#place(p, Math.max(this.#playedEndMs, p.sentMs))
    this.#place(last, Math.max(this.#playedEndMs, last.sentMs, atMs - this.#ms(last.samples.length)))
  }

  paused(atMs: number): void {
    this.#pausedAtMs ??= atMs
  }

  resumed(): void {
    this.#pausedAtMs = undefined
  }

  cleared(clearedAtMs: number): void {
    const atMs = Math.min(clearedAtMs, this.#pausedAtMs ?? clearedAtMs)
    this.#pausedAtMs = undefined
    for (const p of this.#pending) {
      const start = Math.max(this.#playedEndMs, p.sentMs)
      if (start >= atMs) break
      this.#place(p, start)
    }
    this.#pending = []
    this.#pendingSamples = 0
    this.#recorder.clearAgentAfter(atMs)
    this.#playedEndMs = atMs
  }

  #place(p: Unconfirmed, startMs: number): void {
    this.#recorder.agent(p.samples, startMs)
    this.#playedEndMs = startMs + this.#ms(p.samples.length)
  }

  #ms(samples: number): number {
    return (samples * 1000) / this.#rate
  }
}
