/**
 * AES in counter mode as SRTP uses it (RFC 3711 section 4.1.1): the 128-bit IV is the session salt shifted by 16
 * bits, XORed with the SSRC at bits 64-95 and the packet index at bits 16-63; the block counter runs in the low 16
 * bits (a packet never needs more than 2^16 blocks, so OpenSSL's 128-bit increment never carries further).
 */
import { type Cipher, createCipheriv, type KeyObject } from 'node:crypto'

/** Writes the IV for `ssrc` and the 48-bit `index` (SRTP's packet index, or SRTCP's 31-bit one) into `iv`. */
export function writeSrtpIv(iv: Buffer, salt: Uint8Array, ssrc: number, index: number): Buffer {
  iv.set(salt, 0)
  iv[14] = 0
  iv[15] = 0
  iv.writeUInt32BE((iv.readUInt32BE(4) ^ ssrc) >>> 0, 4)
  // The index in octets 8 to 13: its high 16 bits, then its low 32.
  iv.writeUInt16BE(iv.readUInt16BE(8) ^ Math.floor(index / 0x100000000), 8)
  iv.writeUInt32BE((iv.readUInt32BE(10) ^ (index % 0x100000000)) >>> 0, 10)
  return iv
}

/** `input` XORed with the AES-128-CM keystream that starts at `iv` (encryption and decryption alike). */
export function aesCm(key: KeyObject | Uint8Array, iv: Uint8Array, input: Uint8Array): Buffer {
  return createCipheriv('aes-128-ctr', key, iv).update(input)
}

/** Octets of one AES block. */
const BLOCK = 16
/** Whether an Int32Array's words hold their low octet first (x86, ARM as Node runs them). */
const LITTLE_ENDIAN = new Uint8Array(new Int32Array([1]).buffer)[0] === 1

/**
 * Working memory shared by every key (a keystream is made synchronously, so never by two at once; shared, it stays in
 * the CPU's cache): one IV and the same memory as words, and the counter blocks of the largest batch made.
 */
const iv = Buffer.alloc(BLOCK)
const ivWords = new Int32Array(iv.buffer, iv.byteOffset, BLOCK / 4)
let counters = Buffer.alloc(BLOCK * 16)
let counterWords = new Int32Array(counters.buffer, counters.byteOffset, (BLOCK * 16) / 4)

/** Packets in a row another SSRC sends before its keystream is made in batches. */
const NEWCOMER_RUN = 4

/**
 * AES-CM under one session key for many short packets: one AES-ECB cipher for the key's life, fed the packets'
 * counter blocks, its output (the keystream) XORed in here. The same AES as {@link aesCm}; Node cannot give a
 * counter-mode cipher a new IV, and a cipher object a packet cost three times the packet's AES (3.6 against
 * 1.2 us for a 160-octet payload, measured side by side). ECB without padding returns each block as it goes in,
 * so the cipher is never finalised and keeps no state between packets.
 *
 * With `ahead` above 1, the keystream of the next `ahead` packets of a stream is made in one call: a packet's
 * keystream depends only on its SSRC and index, and a stream's indices run on by one, so one cipher call (its fixed
 * cost is most of a short packet's AES) serves a batch of packets. A packet outside the batch (a late one, another
 * SSRC, a longer payload) gets its own keystream; one past the batch starts the next batch at its index.
 */
export class AesCmKeystream {
  readonly #ecb: Cipher
  readonly #ahead: number
  /** The batch: `#count` packets of SSRC `#ssrc` from index `#first`, `#blocks` keystream blocks each. */
  #batch: Buffer | undefined
  /** The batch as words (made once a batch, not once a packet), when it starts on a 4-octet boundary. */
  #batchWords: Int32Array | undefined
  #ssrc = -1
  #first = 0
  #count = 0
  #blocks = 0
  /** Another SSRC than the batch's, and how many of its packets came in a row. */
  #newcomer = -1
  #newcomerRun = 0

  /** `ahead`: packets whose keystream is made in one cipher call (1 for a stream whose indices do not run on). */
  constructor(key: KeyObject | Uint8Array, ahead = 1) {
    this.#ecb = createCipheriv('aes-128-ecb', key, null)
    this.#ecb.setAutoPadding(false)
    this.#ahead = Math.max(1, Math.floor(ahead))
  }

  /**
   * `input[from..to)` XORed with the keystream of packet `index` of `ssrc` under the session `salt` (RFC 3711
   * section 4.1.1's IV), written into `output` at `at`.
   */
  xor(salt: Uint8Array, ssrc: number, index: number, input: Uint8Array, from: number, to: number, output: Uint8Array, at: number): void {
    const n = to - from
    if (n <= 0) return
    const blocks = Math.ceil(n / BLOCK)
    if (blocks > 0x10000) throw new RangeError('an SRTP packet is never longer than 2^16 AES blocks')
    let stream: Buffer
    let streamWords: Int32Array | undefined
    let offset = 0
    if (ssrc === this.#ssrc && index >= this.#first && index < this.#first + this.#count && blocks <= this.#blocks) {
      stream = this.#batch!
      streamWords = this.#batchWords
      offset = (index - this.#first) * this.#blocks * BLOCK
      this.#newcomerRun = 0
    } else if (this.#ahead > 1 && this.#batches(ssrc, index)) {
      stream = this.#keystream(salt, ssrc, index, blocks, this.#ahead)
      streamWords = wordsOf(stream)
      this.#batch = stream
      this.#batchWords = streamWords
      if (ssrc !== this.#ssrc) this.#newcomer = -1
      this.#ssrc = ssrc
      this.#first = index
      this.#count = this.#ahead
      this.#blocks = blocks
    } else {
      stream = this.#keystream(salt, ssrc, index, blocks, 1)
    }
    xorInto(input, from, stream, streamWords, offset, n, output, at)
  }

  /**
   * Whether a packet outside the batch starts a new one: one past it of the batch's SSRC does, a late one does not;
   * another SSRC does once it has sent a few packets in a row (two SSRCs taking turns must not make a batch each).
   */
  #batches(ssrc: number, index: number): boolean {
    if (ssrc === this.#ssrc) return index >= this.#first
    if (ssrc !== this.#newcomer) {
      this.#newcomer = ssrc
      this.#newcomerRun = 0
    }
    return ++this.#newcomerRun > NEWCOMER_RUN || this.#ssrc === -1
  }

  /** The keystream of `packets` packets from `index`, `blocks` blocks each, in one cipher call. */
  #keystream(salt: Uint8Array, ssrc: number, index: number, blocks: number, packets: number): Buffer {
    const size = packets * blocks * BLOCK
    if (counters.length < size) {
      counters = Buffer.alloc(size)
      counterWords = new Int32Array(counters.buffer, counters.byteOffset, size >>> 2)
    }
    // Written a word at a time: the IV and the counters are this module's own, on 4-octet boundaries.
    const words = counterWords
    for (let p = 0; p < packets; p++) {
      writeSrtpIv(iv, salt, ssrc, index + p)
      const w0 = ivWords[0]!
      const w1 = ivWords[1]!
      const w2 = ivWords[2]!
      // The IV's low 16 bits are zero (writeSrtpIv): the block number is the counter, in octets 14 and 15.
      const w3 = ivWords[3]!
      let o = p * blocks * 4
      for (let b = 0; b < blocks; b++, o += 4) {
        words[o] = w0
        words[o + 1] = w1
        words[o + 2] = w2
        words[o + 3] = w3 | (LITTLE_ENDIAN ? ((b & 0xff) << 24) | ((b >>> 8) << 16) : b)
      }
    }
    return this.#ecb.update(counters.subarray(0, size))
  }
}

/** `stream` as 32-bit words, when it starts on a 4-octet boundary (a cipher's output does). */
function wordsOf(stream: Buffer): Int32Array | undefined {
  return (stream.byteOffset & 3) === 0 ? new Int32Array(stream.buffer, stream.byteOffset, stream.length >>> 2) : undefined
}

/**
 * `output[at..at + n)` = `input[from..)` XOR `stream[offset..)`. Four octets at a time when all three start on a
 * 4-octet boundary (a datagram's buffer, a pool slice and the keystream do at an RTP payload): a 160-octet payload is
 * then 40 XORs instead of 160. `streamWords`, when given, is `stream` as words (a batch's, made once). A word view
 * of a packet costs a native call for its `buffer`, so when the packet is encrypted where it lies (`input` is
 * `output`) one view serves both. The order of octets within a word is the same in all three, so the host's byte
 * order does not matter.
 */
function xorInto(
  input: Uint8Array,
  from: number,
  stream: Buffer,
  streamWords: Int32Array | undefined,
  offset: number,
  n: number,
  output: Uint8Array,
  at: number,
): void {
  let done = 0
  if (n >= 16) {
    const a = input.byteOffset + from
    const o = output.byteOffset + at
    const words = streamWords ?? wordsOf(stream)
    if (words !== undefined && ((a | o | offset) & 3) === 0) {
      const count = n >>> 2
      const inWords = new Int32Array(input.buffer, a, count)
      const outWords = input === output && from === at ? inWords : new Int32Array(output.buffer, o, count)
      const k = offset >>> 2
      for (let i = 0; i < count; i++) outWords[i] = inWords[i]! ^ words[k + i]!
      done = count << 2
    }
  }
  for (let i = done; i < n; i++) output[at + i] = input[from + i]! ^ stream[offset + i]!
}
