/**
 * The caller's earpiece: plays assistant audio at 8000 bytes/s (mu-law 8 kHz) the way the carrier
 * does, echoing each mark once the audio queued before it has played, and on `clear` dropping the
 * unplayed audio and echoing every pending mark at once.
 */
import { performance } from 'node:perf_hooks'

/** Playback rate of mu-law 8 kHz mono. */
export const MULAW_BYTES_PER_SECOND = 8000

/** A mark the server sent and what became of it. */
export interface EarpieceMark {
  readonly name: string
  /** performance.now() when the mark arrived. */
  readonly receivedAt: number
  /** When it was echoed (undefined while pending). */
  echoedAt: number | undefined
  /** True when a `clear` (not playback) released it. */
  cleared: boolean
}

/** One `clear` the server sent. */
export interface EarpieceClear {
  readonly at: number
  /** Bytes queued but never played. */
  readonly droppedBytes: number
  /** Marks it released, in order. */
  readonly releasedMarks: readonly string[]
}

/** Options of an `Earpiece`. */
export interface EarpieceOptions {
  /** Called when a mark is due to be echoed (played, or released by clear). */
  readonly onMark: (name: string, mark: EarpieceMark) => void
  /** 1 = real time; 10 = ten times faster; Infinity = instant. Default 1. */
  readonly speed?: number
  readonly now?: () => number
}

interface Segment {
  readonly audio: Buffer
  readonly start: number
  readonly end: number
}

/** Real-time playback model of the caller's side. */
export class Earpiece {
  readonly marks: EarpieceMark[] = []
  readonly clears: EarpieceClear[] = []
  readonly #onMark: EarpieceOptions['onMark']
  readonly #speed: number
  readonly #now: () => number
  readonly #received: Buffer[] = []
  readonly #played: Buffer[] = []
  #segments: Segment[] = []
  #pending: { mark: EarpieceMark; due: number }[] = []
  #playEnd = 0
  #timer: NodeJS.Timeout | undefined
  #closed = false

  constructor(options: EarpieceOptions) {
    this.#onMark = options.onMark
    this.#speed = options.speed ?? 1
    this.#now = options.now ?? (() => performance.now())
  }

  /** Queue assistant audio behind whatever is still playing. */
  push(audio: Buffer): void {
    if (this.#closed) return
    this.#received.push(audio)
    const now = this.#now()
    const start = Math.max(now, this.#playEnd)
    const end = start + (audio.length * 1000) / MULAW_BYTES_PER_SECOND / this.#speed
    this.#segments.push({ audio, start, end })
    this.#playEnd = end
  }

  /** Echo `name` once everything queued before it has played. */
  mark(name: string): void {
    if (this.#closed) return
    const now = this.#now()
    const mark: EarpieceMark = { name, receivedAt: now, echoedAt: undefined, cleared: false }
    this.marks.push(mark)
    this.#pending.push({ mark, due: Math.max(now, this.#playEnd) })
    this.#schedule()
  }

  /** Drop unplayed audio; echo every pending mark now. */
  clear(): void {
    if (this.#closed) return
    const now = this.#now()
    let dropped = 0
    for (const seg of this.#segments) {
      const heard = heardBytes(seg, now)
      if (heard > 0) this.#played.push(heard === seg.audio.length ? seg.audio : seg.audio.subarray(0, heard))
      dropped += seg.audio.length - heard
    }
    this.#segments = []
    this.#playEnd = now
    const released = this.#pending
    this.#pending = []
    this.#unschedule()
    this.clears.push({ at: now, droppedBytes: dropped, releasedMarks: released.map((p) => p.mark.name) })
    for (const { mark } of released) this.#echo(mark, now, true)
  }

  /** Every assistant byte received, cleared or not. */
  receivedAudio(): Buffer {
    return Buffer.concat(this.#received)
  }

  /** What the caller has heard so far. */
  playedAudio(): Buffer {
    const now = this.#now()
    const parts = this.#played.slice()
    for (const seg of this.#segments) {
      const heard = heardBytes(seg, now)
      if (heard > 0) parts.push(seg.audio.subarray(0, heard))
    }
    return Buffer.concat(parts)
  }

  /** Milliseconds of audio still queued (at the playback speed). */
  queuedMs(): number {
    return Math.max(0, this.#playEnd - this.#now())
  }

  /** Names of marks not yet echoed. */
  pendingMarks(): string[] {
    return this.#pending.map((p) => p.mark.name)
  }

  /** Stop playback; nothing is echoed afterwards. Idempotent. */
  close(): void {
    this.#closed = true
    this.#unschedule()
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#pending.length === 0) return
    const head = this.#pending[0]
    if (head === undefined) return
    // One timer for the whole FIFO keeps echoes in the order the marks were sent.
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, head.due - this.#now()))
  }

  #unschedule(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }

  #fire(): void {
    this.#timer = undefined
    const now = this.#now()
    this.#settlePlayed(now)
    while (this.#pending.length > 0 && (this.#pending[0]?.due ?? Infinity) <= now + 1) {
      const next = this.#pending.shift()
      if (next) this.#echo(next.mark, now, false)
      if (this.#closed) return
    }
    this.#schedule()
  }

  #settlePlayed(now: number): void {
    while (this.#segments.length > 0 && (this.#segments[0]?.end ?? Infinity) <= now) {
      const seg = this.#segments.shift()
      if (seg) this.#played.push(seg.audio)
    }
  }

  #echo(mark: EarpieceMark, now: number, cleared: boolean): void {
    mark.echoedAt = now
    mark.cleared = cleared
    this.#onMark(mark.name, mark)
  }
}

function heardBytes(seg: Segment, now: number): number {
  if (now >= seg.end) return seg.audio.length
  if (now <= seg.start) return 0
  return Math.min(seg.audio.length, Math.floor(((now - seg.start) / (seg.end - seg.start)) * seg.audio.length))
}
