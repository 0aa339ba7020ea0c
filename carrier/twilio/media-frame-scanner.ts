/**
 * Fast path of the media codec: reads a `media` frame straight from the WebSocket message's bytes, without
 * turning them into a string, parsing JSON into objects or decoding base64 through a string. The carrier sends
 * ~50 of these per second per call, so this is where the gateway's garbage comes from at a few hundred calls.
 *
 * It accepts only the plain shape carriers send: one JSON object whose values are ASCII strings without escapes,
 * non-negative integers, or (for `media`) one such object. Anything else (another event, an escape, a nested
 * array, a duplicate key, invalid base64) returns `undefined`, and the caller decodes the frame the general way:
 * both paths give the same result for every frame (test/carrier/media-frame-scanner.test.ts checks it).
 */

/** The fields of a `media` frame, as the general decoder would read them from the parsed JSON. */
export interface ScannedMedia {
  /** Absent when the frame has no streamSid. */
  streamSid: string | undefined
  /** Raw digits of sequenceNumber, chunk and timestamp: -1 absent, -2 present but not a plain integer. */
  sequenceNumber: number
  chunk: number
  timestamp: number
  /** `media.track`, undefined when absent. */
  track: string | undefined
  /** Decoded payload; undefined when `media.payload` is absent. */
  payload: Buffer | undefined
  /** True when `media` itself was present and an object. */
  hasMedia: boolean
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COLON = 0x3a
const COMMA = 0x2c
const OPEN = 0x7b
const CLOSE = 0x7d

/** Field values the scanner reports for numbers. */
export const ABSENT = -1
export const NOT_PLAIN = -2

/** Base64 alphabet -> 6-bit value; 255 for anything else (the general path then decides). */
const B64 = new Uint8Array(256).fill(255)
for (let i = 0; i < 64; i++) B64['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i

/** Reads `media` frames from bytes; remembers the last stream id so it is not rebuilt 50 times a second. */
export class MediaFrameScanner {
  #sid = ''
  #sidBytes = new Uint8Array(0)
  #b: Uint8Array = EMPTY
  #p = 0
  #end = 0
  #from = 0
  #to = 0
  /** Reused for every frame: the codec copies what it keeps before the next scan. */
  readonly #out: ScannedMedia = {
    streamSid: undefined,
    sequenceNumber: ABSENT,
    chunk: ABSENT,
    timestamp: ABSENT,
    track: undefined,
    payload: undefined,
    hasMedia: false,
  }

  /**
   * The frame's fields when it is a plain `media` frame; undefined to let the general decoder handle it.
   * The result is reused by the next call.
   */
  scan(bytes: Uint8Array): Readonly<ScannedMedia> | undefined {
    this.#b = bytes
    this.#p = 0
    this.#end = bytes.length
    const out = this.#out
    out.streamSid = undefined
    out.sequenceNumber = ABSENT
    out.chunk = ABSENT
    out.timestamp = ABSENT
    out.track = undefined
    out.payload = undefined
    out.hasMedia = false
    try {
      return this.#frame(out) ? out : undefined
    } finally {
      this.#b = EMPTY
    }
  }

  #frame(out: ScannedMedia): boolean {
    const seen = this.#object(TOP, out)
    this.#space()
    // An `event` field was seen only if it said "media" (#field gives up on anything else).
    return seen >= 0 && (seen & (1 << EVENT)) !== 0 && this.#p === this.#end
  }

  /**
   * An object of plain fields at `level`: its known keys go to #field, others are skipped. Returns the bit set of
   * the known keys seen, or -1 to give up (a known key twice included: JSON.parse would keep the last one).
   */
  #object(level: number, out: ScannedMedia): number {
    if (!this.#byte(OPEN)) return -1
    let seen = 0
    if (this.#peek() === CLOSE) {
      this.#p++
      return seen
    }
    for (;;) {
      const key = this.#key()
      if (key === undefined) return -1
      if (key >= 0 && KEY_LEVEL[key] === level) {
        if (seen & (1 << key)) return -1
        seen |= 1 << key
        if (!this.#field(key, out)) return -1
      } else if (!this.#skipScalar()) {
        // Unknown here (another level's name counts as unknown): skipped, as JSON.parse's reader ignores it.
        return -1
      }
      this.#space()
      const c = this.#next()
      if (c === CLOSE) return seen
      if (c !== COMMA) return -1
    }
  }

  /** The value of known key `key` into `out`; false to give up. */
  #field(key: number, out: ScannedMedia): boolean {
    switch (key) {
      case EVENT:
        return this.#string() && this.#to - this.#from === 5 && this.#equals(this.#from, 'media')
      case STREAM_SID:
        if (!this.#string()) return false
        out.streamSid = this.#sidString(this.#from, this.#to)
        return true
      case SEQUENCE_NUMBER:
        out.sequenceNumber = this.#integer()
        return out.sequenceNumber !== NOT_PLAIN
      case MEDIA:
        out.hasMedia = true
        return this.#object(IN_MEDIA, out) >= 0
      case TRACK: {
        if (!this.#string()) return false
        const from = this.#from
        const to = this.#to
        out.track = to - from === 7 && this.#equals(from, 'inbound') ? 'inbound' : this.#latin1(from, to)
        return true
      }
      case CHUNK:
        out.chunk = this.#integer()
        return out.chunk !== NOT_PLAIN
      case TIMESTAMP:
        out.timestamp = this.#integer()
        return out.timestamp !== NOT_PLAIN
      case PAYLOAD: {
        // Most of the frame: its closing quote is found natively (Buffer indexOf: ~40-60 ns against ~1 us for the
        // byte loop of #string), and #base64 rejects every byte that is not base64 (a backslash, a control or
        // non-ASCII byte included), so what #string would refuse is still refused.
        const b = this.#b
        if (this.#p >= this.#end || b[this.#p] !== QUOTE) return false
        const from = this.#p + 1
        const to = b.indexOf(QUOTE, from)
        if (to < 0) return false
        const payload = this.#base64(from, to)
        if (payload === undefined) return false
        this.#p = to + 1
        out.payload = payload
        return true
      }
      default:
        return false
    }
  }

  /** A key and its colon: its index in KEYS, -1 for an unknown plain key, undefined to give up. */
  #key(): number | undefined {
    this.#space()
    if (!this.#string()) return undefined
    const from = this.#from
    const to = this.#to
    this.#space()
    if (!this.#byte(COLON)) return undefined
    this.#space()
    for (let k = 0; k < KEYS.length; k++) {
      const name = KEYS[k]!
      if (to - from === name.length && this.#equals(from, name)) return k
    }
    return -1
  }

  /** Skips a plain string or integer value of an unknown key. */
  #skipScalar(): boolean {
    if (this.#peek() === QUOTE) return this.#string()
    return this.#integer() >= 0
  }

  /** A string without escapes or non-ASCII; its content is [#from, #to). False when it is not one. */
  #string(): boolean {
    const b = this.#b
    if (this.#p >= this.#end || b[this.#p] !== QUOTE) return false
    const from = this.#p + 1
    for (let p = from; p < this.#end; p++) {
      const c = b[p]!
      if (c === QUOTE) {
        this.#p = p + 1
        this.#from = from
        this.#to = p
        return true
      }
      if (c === BACKSLASH || c < 0x20 || c >= 0x80) return false
    }
    return false
  }

  /** A non-negative integer as digits or as a string of digits (what `toUint` accepts); NOT_PLAIN otherwise. */
  #integer(): number {
    const b = this.#b
    const quoted = b[this.#p] === QUOTE
    let p = quoted ? this.#p + 1 : this.#p
    const from = p
    let n = 0
    while (p < this.#end && b[p]! >= 0x30 && b[p]! <= 0x39) n = n * 10 + (b[p++]! - 0x30)
    const digits = p - from
    // Leading zeros, empty or overlong values, fractions and exponents are left to the general path.
    if (digits === 0 || digits > 15 || (digits > 1 && b[from] === 0x30)) return NOT_PLAIN
    if (quoted) {
      if (b[p] !== QUOTE) return NOT_PLAIN
      p++
    } else if (p < this.#end && (b[p] === 0x2e || b[p] === 0x65 || b[p] === 0x45)) return NOT_PLAIN
    this.#p = p
    return n
  }

  /** Strict standard base64 of a non-empty payload into a new buffer; undefined when anything is unusual. */
  #base64(from: number, to: number): Buffer | undefined {
    const b = this.#b
    const len = to - from
    if (len === 0 || len % 4 !== 0) return undefined
    let pad = 0
    if (b[to - 1] === 0x3d) pad++
    if (b[to - 2] === 0x3d) pad++
    const size = (len / 4) * 3 - pad
    if (size === 0) return undefined
    // Pooled: a small Buffer is a slice of Node's shared pool, not a new memory block.
    const out = Buffer.allocUnsafe(size)
    let o = 0
    const last = to - 4
    for (let p = from; p < to; p += 4) {
      const a = B64[b[p]!]!
      const c2 = B64[b[p + 1]!]!
      if (a === 255 || c2 === 255) return undefined
      if (p === last && pad > 0) {
        out[o++] = (a << 2) | (c2 >> 4)
        if (pad === 1) {
          const c3 = B64[b[p + 2]!]!
          if (c3 === 255) return undefined
          out[o++] = ((c2 & 15) << 4) | (c3 >> 2)
        }
        break
      }
      const c3 = B64[b[p + 2]!]!
      const c4 = B64[b[p + 3]!]!
      if (c3 === 255 || c4 === 255) return undefined
      out[o++] = (a << 2) | (c2 >> 4)
      out[o++] = ((c2 & 15) << 4) | (c3 >> 2)
      out[o++] = ((c3 & 3) << 6) | c4
    }
    return out
  }

  #sidString(from: number, to: number): string {
    const b = this.#b
    const sid = this.#sidBytes
    if (sid.length === to - from) {
      let same = true
      for (let i = 0; i < sid.length; i++) {
        if (sid[i] !== b[from + i]) {
          same = false
          break
        }
      }
      if (same) return this.#sid
    }
    this.#sid = this.#latin1(from, to)
    this.#sidBytes = b.slice(from, to)
    return this.#sid
  }

  #latin1(from: number, to: number): string {
    return String.fromCharCode(...this.#b.subarray(from, to))
  }

  #equals(from: number, text: string): boolean {
    const b = this.#b
    for (let i = 0; i < text.length; i++) if (b[from + i] !== text.charCodeAt(i)) return false
    return true
  }

  #space(): void {
    const b = this.#b
    while (this.#p < this.#end) {
      const c = b[this.#p]
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return
      this.#p++
    }
  }

  #peek(): number {
    this.#space()
    return this.#p < this.#end ? this.#b[this.#p]! : -1
  }

  #next(): number {
    return this.#p < this.#end ? this.#b[this.#p++]! : -1
  }

  #byte(c: number): boolean {
    this.#space()
    if (this.#b[this.#p] !== c) return false
    this.#p++
    return true
  }
}

const EMPTY = new Uint8Array(0)
/** Known keys, by index; KEY_LEVEL says where each belongs (the frame itself, or its `media` object). */
const KEYS = ['event', 'streamSid', 'sequenceNumber', 'media', 'track', 'chunk', 'timestamp', 'payload'] as const
const EVENT = 0
const STREAM_SID = 1
const SEQUENCE_NUMBER = 2
const MEDIA = 3
const TRACK = 4
const CHUNK = 5
const TIMESTAMP = 6
const PAYLOAD = 7
const TOP = 0
const IN_MEDIA = 1
const KEY_LEVEL = [TOP, TOP, TOP, TOP, IN_MEDIA, IN_MEDIA, IN_MEDIA, IN_MEDIA]
