import t from 'tap'
import { CARRIER_FRAME_SAMPLES_8K, Framer, VAD_FRAME_SAMPLES_8K } from '../../pipeline/audio/framer.js'

function ramp(n: number, from = 0): Int16Array {
  return Int16Array.from({ length: n }, (_, i) => (from + i) % 30000)
}

for (const size of [CARRIER_FRAME_SAMPLES_8K, VAD_FRAME_SAMPLES_8K]) {
  t.test(`frames of ${size} from odd chunk sizes equal the contiguous stream`, async (t) => {
    const total = 10_007
    const input = ramp(total)
    const framer = new Framer(size)
    const out: number[] = []
    const indices: number[] = []
    let off = 0
    let k = 0
    const sizes = [1, 7, 159, 160, 161, 255, 256, 257, 511, 1000, 3]
    while (off < total) {
      const n = Math.min(sizes[k++ % sizes.length]!, total - off)
      framer.push(input.subarray(off, off + n), (frame, index) => {
        t.equal(frame.length, size)
        out.push(...frame)
        indices.push(index)
      })
      off += n
    }
    const whole = Math.floor(total / size)
    t.equal(out.length, whole * size)
    t.same(out, [...input.subarray(0, whole * size)])
    t.same(
      indices,
      Array.from({ length: whole }, (_, i) => i),
    )
    t.equal(framer.pendingSamples, total - whole * size)
    t.equal(framer.framesEmitted, whole)
  })
}

t.test('leftovers carry across pushes and flush pads with zeros', async (t) => {
  const framer = new Framer(4)
  const frames: number[][] = []
  const take = (f: Int16Array): void => void frames.push([...f])
  t.equal(framer.push(Int16Array.from([1, 2, 3]), take), 0)
  t.equal(framer.pendingSamples, 3)
  t.equal(framer.push(Int16Array.from([4, 5, 6, 7, 8, 9]), take), 2)
  t.equal(framer.push(Int16Array.from([10]), take), 0)
  t.equal(framer.flush(take), 1)
  t.equal(framer.flush(take), 0)
  t.same(frames, [
    [1, 2, 3, 4],
    [5, 6, 7, 8],
    [9, 10, 0, 0],
  ])
  framer.reset()
  t.equal(framer.framesEmitted, 0)
})

t.test('Float32 frames', async (t) => {
  const framer = new Framer<Float32Array>(3, (n) => new Float32Array(n))
  const frames: number[][] = []
  framer.push(Float32Array.from([0.5, 0.25]), (f) => void frames.push([...f]))
  framer.push(Float32Array.from([0.125, 1]), (f) => void frames.push([...f]))
  t.same(frames, [[0.5, 0.25, 0.125]])
  t.throws(() => new Framer(0), RangeError)
})
