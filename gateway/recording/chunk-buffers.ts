/**
 * The buffers recording chunks are handed over in, used again once a chunk is written.
 *
 * Each recorder hands over a second of audio per channel and second. A new buffer each time lived until its
 * statement returned, often long enough to be promoted, and a promoted buffer's memory is freed only by a full
 * collection. V8 counts the memory outside its heap that grew since the last full collection against the old
 * generation's room, so at 300 recorded calls these ~4.5 MB/s started a full collection every ~6.5 s. Those
 * collections brought the event loop's stalls of over 20 ms. A buffer given back here is reused instead.
 *
 * Sizes are powers of two from 1 KiB. At most MAX_POOLED_BYTES wait for reuse; beyond that a buffer given back is
 * left to the collector. Only buffers taken here are taken back, each once.
 */

/** The smallest buffer, as a power of two (1 KiB). */
const MIN_SIZE_LOG2 = 10
/** Most bytes waiting for reuse (a bound on what the pool keeps when recordings end). */
const MAX_POOLED_BYTES = 16 * 1024 * 1024

const free = new Map<number, ArrayBuffer[]>()
let pooledBytes = 0
/** Buffers handed out and not yet given back. */
const lent = new WeakSet<ArrayBuffer>()

function sizeFor(bytes: number): number {
  return 2 ** Math.max(MIN_SIZE_LOG2, Math.ceil(Math.log2(Math.max(1, bytes))))
}

/** A buffer of `bytes` bytes, with contents left from earlier use: the caller fills all of it. */
export function takeChunkBuffer(bytes: number): Buffer {
  const size = sizeFor(bytes)
  let memory = free.get(size)?.pop()
  if (memory !== undefined) pooledBytes -= size
  else memory = new ArrayBuffer(size)
  lent.add(memory)
  return Buffer.from(memory, 0, bytes)
}

/**
 * Gives back a buffer from `takeChunkBuffer` once nothing reads it any more (its chunk is written or dropped).
 * Anything else is ignored, as is a buffer given back twice.
 */
export function giveBackChunkBuffer(pcm: Uint8Array): void {
  const memory = pcm.buffer
  if (!(memory instanceof ArrayBuffer) || !lent.has(memory)) return
  lent.delete(memory)
  const size = memory.byteLength
  if (pooledBytes + size > MAX_POOLED_BYTES) return
  let list = free.get(size)
  if (list === undefined) {
    list = []
    free.set(size, list)
  }
  list.push(memory)
  pooledBytes += size
}

/** Gives back the buffers of chunks written or given up on (a recorder's batch, once its sink has settled). */
export function giveBackChunkBuffers(chunks: readonly { pcm: Uint8Array | null }[]): void {
  for (const c of chunks) if (c.pcm !== null) giveBackChunkBuffer(c.pcm)
}

/** Bytes waiting for reuse (tests). */
export function pooledChunkBytes(): number {
  return pooledBytes
}
