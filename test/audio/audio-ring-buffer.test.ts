import t from 'tap'
import { AudioRingBuffer } from '../../pipeline/audio/audio-ring-buffer.js'

/** The reference: every byte ever appended, trimmed from the front to an aligned position. */
class Model {
  bytes: number[] = []
  overflowed = false
  constructor(
    readonly capacity: number,
    readonly alignment: number,
  ) {}
  append(chunk: Uint8Array): void {
    this.bytes.push(...chunk)
    if (this.bytes.length > this.capacity) {
      let excess = this.bytes.length - this.capacity
      excess += (this.alignment - (excess % this.alignment)) % this.alignment
      this.bytes.splice(0, excess)
      this.overflowed = true
    }
  }
  clear(): void {
    this.bytes = []
    this.overflowed = false
  }
}

/** Deterministic pseudo-random numbers (the test must not depend on luck). */
function lcg(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

for (const [capacity, alignment] of [
  [40_000, 1],
  [16_000, 2],
  [10_001, 2],
  [9000, 1],
] as const) {
  t.test(`capacity ${capacity}, alignment ${alignment}: matches keeping every byte and trimming`, async (t) => {
    const rnd = lcg(capacity + alignment)
    const ring = new AudioRingBuffer(capacity, alignment)
    const cap = capacity - (capacity % alignment)
    const model = new Model(cap, alignment)
    let next = 0
    let checks = 0
    for (let step = 0; step < 3000; step++) {
      const r = rnd()
      if (r < 0.01) {
        ring.clear()
        model.clear()
        continue
      }
      // Mostly 20 ms frames, sometimes odd sizes and chunks larger than the whole capacity.
      const n = r < 0.8 ? 160 : r < 0.98 ? 1 + Math.floor(rnd() * 3000) : cap + 1 + Math.floor(rnd() * 5000)
      const chunk = new Uint8Array(n)
      for (let i = 0; i < n; i++) chunk[i] = next++ & 0xff
      ring.append(chunk)
      model.append(chunk)
      if (step % 37 === 0 || n > cap) {
        checks++
        const snap = ring.snapshot()
        if (snap.length !== model.bytes.length || !snap.equals(Buffer.from(model.bytes))) {
          t.fail(`step ${step}: snapshot differs (${snap.length} vs ${model.bytes.length} bytes)`)
          return
        }
        if (ring.overflowed !== model.overflowed) {
          t.fail(`step ${step}: overflowed ${ring.overflowed}, expected ${model.overflowed}`)
          return
        }
      }
      if (ring.size !== model.bytes.length) {
        t.fail(`step ${step}: size ${ring.size}, expected ${model.bytes.length}`)
        return
      }
    }
    t.ok(checks > 50, `${checks} snapshots compared`)
    t.ok(model.overflowed || ring.size > 0, 'the run reached the capacity')
  })
}

t.test('the appended chunk is copied, and a snapshot is a copy too', async (t) => {
  const ring = new AudioRingBuffer(100)
  const chunk = Buffer.from([1, 2, 3])
  ring.append(chunk)
  chunk[0] = 9
  const snap = ring.snapshot()
  t.same([...snap], [1, 2, 3])
  snap[1] = 7
  t.same([...ring.snapshot()], [1, 2, 3])
})

t.test('clear forgets the audio and the overflow, and the ring keeps working', async (t) => {
  const ring = new AudioRingBuffer(4)
  ring.append(Buffer.from([1, 2, 3, 4, 5, 6]))
  t.equal(ring.overflowed, true)
  t.same([...ring.snapshot()], [3, 4, 5, 6])
  ring.clear()
  t.equal(ring.size, 0)
  t.equal(ring.overflowed, false)
  t.equal(ring.snapshot().length, 0)
  ring.append(Buffer.from([7, 8]))
  t.same([...ring.snapshot()], [7, 8])
})
