/**
 * Keeps the most recent `capacity` bytes of audio, so a vendor stream can replay them after a reconnect.
 * `overflowed` tells whether bytes were lost since the last {@link clear}, i.e. whether a replay starts at the
 * true beginning of the current turn.
 *
 * A true ring: byte `p` of the stream lives at `p % storage.length`, so appending copies the chunk and allocates
 * nothing once the storage has grown to fit (it doubles up to `capacity`). This runs for every 20 ms frame of every
 * call; holding a Buffer per chunk instead kept ~250 small objects alive per call for 5 s each, which the GC then
 * had to promote and mark.
 */
export class AudioRingBuffer {
  readonly #capacity: number
  readonly #alignment: number
  #storage: Buffer = Buffer.alloc(0)
  /** Bytes appended since construction: the stream position after the newest byte. */
  #end = 0
  /** Stream position of the last {@link clear}: samples are aligned from there. */
  #base = 0
  #size = 0
  #overflowed = false

  /** `alignment` is the sample width in bytes, so trimming never splits a sample. */
  constructor(capacity: number, alignment = 1) {
    this.#alignment = Math.max(1, alignment)
    this.#capacity = Math.max(this.#alignment, capacity - (capacity % this.#alignment))
  }

  /** Bytes held. */
  get size(): number {
    return this.#size
  }

  /** True when older audio was discarded since the last {@link clear}. */
  get overflowed(): boolean {
    return this.#overflowed
  }

  /** Append a chunk (copied), discarding the oldest bytes beyond capacity. */
  append(chunk: Uint8Array): void {
    const n = chunk.length
    if (n === 0) return
    let size = this.#size + n
    const end = this.#end + n
    if (size > this.#capacity) {
      // Keep from a sample boundary counted from the last clear, so a dropped prefix never splits a sample.
      const a = this.#alignment
      const keepFrom = this.#base + Math.ceil((end - this.#capacity - this.#base) / a) * a
      size = end - keepFrom
      this.#overflowed = true
    }
    if (this.#storage.length < size) this.#grow(size)
    // Only the last `size` bytes of the chunk can survive (the rest would be overwritten at once).
    const from = Math.max(0, n - size)
    this.#put(from === 0 ? chunk : chunk.subarray(from), this.#end + from)
    this.#end = end
    this.#size = size
  }

  /** Everything held, oldest first, as one new buffer. */
  snapshot(): Buffer {
    const size = this.#size
    const out = Buffer.allocUnsafe(size)
    if (size === 0) return out
    const storage = this.#storage
    const start = (this.#end - size) % storage.length
    const first = Math.min(size, storage.length - start)
    out.set(storage.subarray(start, start + first), 0)
    if (first < size) out.set(storage.subarray(0, size - first), first)
    return out
  }

  /** Forget everything (a turn ended) and reset `overflowed`. */
  clear(): void {
    this.#base = this.#end
    this.#size = 0
    this.#overflowed = false
  }

  /** Replaces the storage with a larger one (at least `need`, at most capacity), keeping the held bytes. */
  #grow(need: number): void {
    let cap = Math.max(4096, this.#storage.length)
    while (cap < need) cap *= 2
    const held = this.snapshot()
    this.#storage = Buffer.alloc(Math.min(cap, this.#capacity))
    this.#put(held, this.#end - this.#size)
  }

  /** Copies `bytes` into the storage at stream position `at`, wrapping around its end. */
  #put(bytes: Uint8Array, at: number): void {
    const storage = this.#storage
    const cap = storage.length
    let pos = at % cap
    for (let i = 0; i < bytes.length; ) {
      const run = Math.min(bytes.length - i, cap - pos)
      storage.set(run === bytes.length ? bytes : bytes.subarray(i, i + run), pos)
      i += run
      pos = 0
    }
  }
}
