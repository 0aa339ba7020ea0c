/**
 * Keeps the most recent `capacity` bytes of audio, so a vendor stream can replay them after a reconnect.
 * `overflowed` tells whether bytes were lost since the last {@link clear}, i.e. whether a replay starts at the
 * true beginning of the current turn.
 */
export class AudioRingBuffer {
  readonly #chunks: Buffer[] = [];
  readonly #capacity: number;
  readonly #alignment: number;
  #size = 0;
  #overflowed = false;

  /** `alignment` is the sample width in bytes, so trimming never splits a sample. */
  constructor(capacity: number, alignment = 1) {
    this.#alignment = Math.max(1, alignment);
    this.#capacity = Math.max(this.#alignment, capacity - (capacity % this.#alignment));
  }

  /** Bytes held. */
  get size(): number {
    return this.#size;
  }

  /** True when older audio was discarded since the last {@link clear}. */
  get overflowed(): boolean {
    return this.#overflowed;
  }

  /** Append a chunk (copied), discarding the oldest bytes beyond capacity. */
  append(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#chunks.push(Buffer.from(chunk));
    this.#size += chunk.length;
    let excess = this.#size - this.#capacity;
    if (excess > 0) excess += (this.#alignment - (excess % this.#alignment)) % this.#alignment;
    while (excess > 0) {
      const first = this.#chunks[0];
      if (first === undefined) break;
      this.#overflowed = true;
      if (first.length <= excess) {
        this.#chunks.shift();
        this.#size -= first.length;
        excess -= first.length;
      } else {
        this.#chunks[0] = first.subarray(excess);
        this.#size -= excess;
        excess = 0;
      }
    }
  }

  /** Everything held, oldest first, as one buffer. */
  snapshot(): Buffer {
    return Buffer.concat(this.#chunks, this.#size);
  }

  /** Forget everything (a turn ended) and reset `overflowed`. */
  clear(): void {
    this.#chunks.length = 0;
    this.#size = 0;
    this.#overflowed = false;
  }
}
