/**
 * Cuts a TCP/TLS byte stream into SIP messages (RFC 3261 section 18.3): the header section ends at a blank line,
 * the body is exactly Content-Length bytes. CRLF keep-alives between messages (RFC 5626 section 3.5.1) are
 * skipped, and each double-CRLF ping among them is reported so the transport can answer its CRLF pong. The buffer is bounded: a peer that sends a header section or body over the limit gets an error and
 * the transport closes the connection, since a stream cannot be resynchronised after a framing error.
 */
import { decodeError } from '../message/sip-decode-error.js'
import { decodeSipMessage, findHeaderEnd, MAX_MESSAGE_BYTES, type SipDecodeResult, salvageRequest } from '../message/sip-message-codec.js'

/** Framer options. */
export interface SipStreamFramerOptions {
  readonly maxBytes?: number
  readonly maxHeaders?: number
  /** A CRLFCRLF ping between messages (RFC 5626 section 4.4.1): the transport answers CRLF. */
  readonly onPing?: () => void
}

/** The ping, byte by byte: a keep-alive run may arrive split over several reads. */
const PING = [0x0d, 0x0a, 0x0d, 0x0a]

/** Splits a stream into decoded messages; after a framing error it stays failed and returns nothing more. */
export class SipStreamFramer {
  readonly #maxBytes: number
  readonly #maxHeaders: number | undefined
  readonly #onPing: (() => void) | undefined
  #buffer: Buffer = Buffer.alloc(0)
  #failed = false
  /** How many bytes of PING the keep-alive bytes since the last message have matched. */
  #pingMatched = 0

  constructor(options: SipStreamFramerOptions = {}) {
    this.#maxBytes = options.maxBytes ?? MAX_MESSAGE_BYTES
    this.#maxHeaders = options.maxHeaders
    this.#onPing = options.onPing
  }

  /** True once a framing error was returned: the connection must be closed. */
  get failed(): boolean {
    return this.#failed
  }

  /** Bytes held waiting for the rest of a message. */
  get buffered(): number {
    return this.#buffer.length
  }

  /**
   * Adds bytes from the socket and returns every message they complete, in order. A message that frames but does
   * not decode comes back as `{ ok: false }` and the stream goes on; a framing error ends it.
   */
  push(chunk: Uint8Array): SipDecodeResult[] {
    if (this.#failed) return []
    this.#buffer = this.#buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.#buffer, chunk])
    const out: SipDecodeResult[] = []
    for (;;) {
      let start = 0
      while (this.#buffer[start] === 0x0d || this.#buffer[start] === 0x0a) this.#keepAlive(this.#buffer[start++]!)
      if (start > 0) this.#buffer = this.#buffer.subarray(start)
      if (this.#buffer.length === 0) break
      this.#pingMatched = 0
      const end = findHeaderEnd(this.#buffer)
      if (end === null) {
        if (this.#buffer.length > this.#maxBytes) out.push(this.#fail('header section exceeds the size limit'))
        break
      }
      const head = this.#buffer.toString('latin1', 0, end.at)
      const lengths = [...head.matchAll(/^(?:content-length|l)[ \t]*:[ \t]*([^\r\n]*)$/gim)].map((m) => m[1]!.trim())
      if (lengths.length === 0 || !lengths.every((l) => /^[0-9]{1,10}$/.test(l)) || new Set(lengths).size > 1) {
        out.push(this.#fail('a stream message needs one numeric Content-Length', 'bad_content_length'))
        break
      }
      const total = end.at + end.length + Number(lengths[0])
      if (total > this.#maxBytes) {
        out.push(this.#fail(`message of ${total} bytes exceeds ${this.#maxBytes}`))
        break
      }
      if (this.#buffer.length < total) break
      const bytes = this.#buffer.subarray(0, total)
      this.#buffer = this.#buffer.subarray(total)
      out.push(decodeSipMessage(bytes, { framing: 'stream', maxBytes: this.#maxBytes, maxHeaders: this.#maxHeaders }))
    }
    if (this.#buffer.length === 0) this.#buffer = Buffer.alloc(0)
    return out
  }

  /** One keep-alive byte: a completed CRLFCRLF is a ping; a lone CRLF (a pong, or half a ping) is not. */
  #keepAlive(byte: number): void {
    this.#pingMatched = byte === PING[this.#pingMatched] ? this.#pingMatched + 1 : byte === 0x0d ? 1 : 0
    if (this.#pingMatched === PING.length) {
      this.#pingMatched = 0
      this.#onPing?.()
    }
  }

  /** A framing error; a request over the size bound keeps its method and headers so it can get its 513. */
  #fail(reason: string, code: 'too_large' | 'bad_content_length' = 'too_large'): SipDecodeResult {
    const known = code === 'too_large' ? salvageRequest(this.#buffer, this.#maxBytes) : {}
    this.#failed = true
    this.#buffer = Buffer.alloc(0)
    return { ok: false, error: decodeError(code, reason, known) }
  }
}
