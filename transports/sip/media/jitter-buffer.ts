/**
 * A fixed-depth jitter buffer for one incoming RTP audio stream. Packets are put back in sequence order (16-bit
 * sequence numbers extended across wrap-around, RFC 3550 appendix A.1), and the pipeline pulls exactly one 20 ms
 * frame per tick: a gap becomes silence, a duplicate or a packet that comes after its turn is dropped, and every
 * drop is counted. Playout starts once `depthMs` of audio is buffered (or the first packet has waited that long),
 * and starts over after the stream runs dry, so a talkspurt after silence suppression or hold gets the same depth.
 * Works on G.711 payload bytes (one byte per sample), so peers sending 30 or 40 ms packets still yield 20 ms frames.
 */

/** Counters of what happened to the packets, for metrics and logs. */
export interface JitterBufferStats {
  received: number
  /** Packets whose audio reached the pipeline. */
  played: number
  duplicates: number
  /** Packets that arrived after their turn had been filled with silence. */
  late: number
  /** Missing packets replaced by silence while later ones were waiting. */
  lost: number
  /** Frames padded with silence because nothing was buffered. */
  underruns: number
  /** Packets dropped because the buffer was full. */
  overflow: number
  /** Restarts after a new SSRC or a sequence jump. */
  resets: number
}

/** Buffer settings. */
export interface JitterBufferOptions {
  /** Clock in milliseconds; injected so tests need no sleeps. */
  readonly now?: () => number
  /** The byte G.711 uses for silence: 0xFF for PCMU, 0xD5 for PCMA. */
  readonly silenceByte: number
  /** Bytes per output frame: 160 (20 ms at 8 kHz). */
  readonly frameBytes?: number
  /** Audio held before playout starts; 60 ms by default. */
  readonly depthMs?: number
  /** Most packets held; beyond it the oldest are dropped (a sender bursting or a stalled reader). */
  readonly maxPackets?: number
}

/** The RTP fields the buffer reads. */
export interface JitterPacket {
  readonly ssrc: number
  readonly sequence: number
  readonly payload: Uint8Array
}

/** How far back played sequence numbers are remembered to tell a duplicate from a late packet. */
const RECENT = 64
/** Consecutive late packets after which the sender is assumed to have jumped (a restart): the buffer resets. */
const LATE_RESET = 8

/** The jitter buffer for one stream. */
export class JitterBuffer {
  readonly stats: JitterBufferStats = { received: 0, played: 0, duplicates: 0, late: 0, lost: 0, underruns: 0, overflow: 0, resets: 0 }
  readonly #now: () => number
  readonly #silence: number
  readonly #frameBytes: number
  readonly #depthMs: number
  readonly #maxPackets: number
  readonly #packets = new Map<number, Uint8Array>()
  readonly #recent: number[] = []
  #ssrc: number | undefined
  /** Extended sequence number of the next packet to play; undefined before the first packet. */
  #next: number | undefined
  #lastPlayed: number | undefined
  #playing = false
  #firstAt = 0
  #lastSize: number
  #pending: Buffer = Buffer.alloc(0)
  #lateRun = 0

  constructor(options: JitterBufferOptions) {
    this.#now = options.now ?? Date.now
    this.#silence = options.silenceByte
    this.#frameBytes = options.frameBytes ?? 160
    this.#depthMs = options.depthMs ?? 60
    this.#maxPackets = options.maxPackets ?? 50
    this.#lastSize = this.#frameBytes
  }

  /** Packets waiting. */
  get size(): number {
    return this.#packets.size
  }

  /** Adds a packet; says what became of it. */
  push(packet: JitterPacket): 'queued' | 'duplicate' | 'late' | 'overflow' {
    this.stats.received++
    if (this.#ssrc !== packet.ssrc) {
      if (this.#ssrc !== undefined) this.#reset()
      this.#ssrc = packet.ssrc
    }
    let ext = this.#extend(packet.sequence)
    if (this.#packets.has(ext) || this.#recent.includes(ext)) {
      this.stats.duplicates++
      return 'duplicate'
    }
    const floor = this.#playing ? this.#next! : this.#lastPlayed === undefined ? undefined : this.#lastPlayed + 1
    if (floor !== undefined && ext < floor) {
      this.stats.late++
      if (++this.#lateRun < LATE_RESET) return 'late'
      // A run of "late" packets is a sender that jumped backwards (a restart): follow it.
      this.#reset()
      ext = packet.sequence
    }
    this.#lateRun = 0
    if (this.#packets.size === 0 && !this.#playing) this.#firstAt = this.#now()
    this.#packets.set(ext, packet.payload)
    if (this.#next === undefined || (!this.#playing && ext < this.#next)) this.#next = ext
    if (this.#packets.size > this.#maxPackets) {
      const oldest = Math.min(...this.#packets.keys())
      this.#packets.delete(oldest)
      if (this.#playing && oldest === this.#next) this.#next = Math.min(...this.#packets.keys())
      this.stats.overflow++
      return oldest === ext ? 'overflow' : 'queued'
    }
    return 'queued'
  }

  /** The next 20 ms frame: audio in order, silence for gaps, and silence while filling up. */
  pop(): Buffer {
    if (!this.#playing) {
      const buffered = [...this.#packets.values()].reduce((n, p) => n + p.length, 0)
      const waited = this.#packets.size > 0 && this.#now() - this.#firstAt >= this.#depthMs
      if (buffered < this.#depthMs * (this.#frameBytes / 20) && !waited) return this.#silenceFrame()
      this.#playing = true
      this.#next = Math.min(...this.#packets.keys())
    }
    const parts: Uint8Array[] = [this.#pending]
    let have = this.#pending.length
    while (have < this.#frameBytes) {
      const payload = this.#packets.get(this.#next!)
      if (payload !== undefined) {
        this.#packets.delete(this.#next!)
        this.#markPlayed(this.#next!)
        this.stats.played++
        this.#lastSize = payload.length || this.#lastSize
        parts.push(payload)
        have += payload.length
      } else if (this.#packets.size > 0) {
        this.stats.lost++
        this.#lastPlayed = this.#next!
        parts.push(Buffer.alloc(this.#lastSize, this.#silence))
        have += this.#lastSize
      } else {
        // Ran dry: pad this frame and fill up again before playing on.
        this.stats.underruns++
        this.#playing = false
        parts.push(Buffer.alloc(this.#frameBytes - have, this.#silence))
        have = this.#frameBytes
        break
      }
      this.#next!++
    }
    // The usual case, one packet that is exactly a frame and nothing pending: that packet, not a copy of it.
    if (parts.length === 2 && parts[0]!.length === 0 && have === this.#frameBytes) {
      const only = parts[1]!
      return Buffer.from(only.buffer, only.byteOffset, only.length)
    }
    const all = Buffer.concat(parts)
    this.#pending = all.subarray(this.#frameBytes)
    return all.subarray(0, this.#frameBytes)
  }

  /** Extends a 16-bit sequence number to the one nearest the current position. */
  #extend(sequence: number): number {
    const ref = this.#next ?? this.#lastPlayed
    if (ref === undefined) return sequence
    const delta = ((((sequence - ref) & 0xffff) + 0x8000) & 0xffff) - 0x8000
    return ref + delta
  }

  /** Records a packet whose audio was played, so a second copy is told apart from a late packet. */
  #markPlayed(ext: number): void {
    this.#lastPlayed = ext
    this.#recent.push(ext)
    if (this.#recent.length > RECENT) this.#recent.shift()
  }

  #silenceFrame(): Buffer {
    return Buffer.alloc(this.#frameBytes, this.#silence)
  }

  #reset(): void {
    this.stats.resets++
    this.#packets.clear()
    this.#recent.length = 0
    this.#next = undefined
    this.#lastPlayed = undefined
    this.#playing = false
    this.#pending = Buffer.alloc(0)
    this.#lateRun = 0
  }
}
