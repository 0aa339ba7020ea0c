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
  readonly #capacity: number;
  readonly #alignment: number;
  #storage: Buffer = Buffer.alloc(0);
  /** Bytes appended since construction: the stream position after the newest byte. */
  #end = 0;
  /** Stream position of the last {@link clear}: samples are aligned from there. */
  #base = 0;
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
  append(chunk: Uint8Array): void {
    const n = chunk.length;
    if (n === 0) return;
    let size = this.#size + n;
    const end = this.#end + n;
    if (size > this.#capacity) {
      // Keep from a sample boundary counted from the last clear, so a dropped prefix never splits a sample.
      const a = this.#alignment;
      const keepFrom = this.#base + Math.ceil((end - this.#capacity - this.#base) / a) * a;
      size = end - keepFrom;
      this.#overflowed = true;
    }
    if (this.#storage.length < size) this.#grow(size);
    const storage = this.#storage;
    const cap = storage.length;
    // Only the last `size` bytes of the chunk can survive (the rest would be overwritten at once).
    const from = Math.max(0, n - size);
    let pos = (this.#end + from) % cap;
    for (let i = from; i < n; ) {
      const run = Math.min(n - i, cap - pos);
      storage.set(run === n && i === 0 ? chunk : chunk.subarray(i, i + run), pos);
      i += run;
      pos = 0;
    }
    this.#end = end;
    this.#size = size;
  }

  /** Everything held, oldest first, as one new buffer. */
  snapshot(): Buffer {
    const out = Buffer.allocUnsafe(this.#size);
    this.#copyTo(out);
    return out;
  }

  /** Forget everything (a turn ended) and reset `overflowed`. */
  clear(): void {
    this.#base = this.#end;
    this.#size = 0;
    this.#overflowed = false;
  }

  /** Writes the held bytes, oldest first, into `out` at 0. */
  #copyTo(out: Uint8Array): void {
    const storage = this.#storage;
    const cap = storage.length;
    if (this.#size === 0) return;
    const start = (this.#end - this.#size) % cap;
    const first = Math.min(this.#size, cap - start);
    out.set(storage.subarray(start, start + first), 0);
    if (first < this.#size) out.set(storage.subarray(0, this.#size - first), first);
  }

  /** Replaces the storage with a larger one (at least `need`, at most capacity), keeping the held bytes in place. */
  #grow(need: number): void {
    let cap = Math.max(4096, this.#storage.length);
    while (cap < need) cap *= 2;
    cap = Math.min(cap, this.#capacity);
    const held = Buffer.allocUnsafe(this.#size);
    this.#copyTo(held);
    const storage = Buffer.alloc(cap);
    const start = (this.#end - this.#size) % cap;
    const first = Math.min(this.#size, cap - start);
    storage.set(held.subarray(0, first), start);
    if (first < this.#size) storage.set(held.subarray(first), 0);
    this.#storage = storage;
  }
}
