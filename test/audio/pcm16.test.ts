import t from 'tap'
import {
  base64ToInt16,
  bufferToInt16,
  deinterleave,
  float32ToInt16,
  int16ToBase64,
  int16ToBuffer,
  int16ToFloat32,
  interleave,
} from '../../pipeline/audio/pcm16.js'

t.test('Int16Array <-> Buffer is little-endian both ways', async (t) => {
  const x = Int16Array.from([1, -2, 0x1234, -32768, 32767])
  const b = int16ToBuffer(x)
  t.same([...b.subarray(0, 6)], [0x01, 0x00, 0xfe, 0xff, 0x34, 0x12])
  t.same([...bufferToInt16(b)], [...x])
})

t.test('bufferToInt16 copies unaligned input and rejects odd lengths', async (t) => {
  const raw = Buffer.from([0xaa, 0x01, 0x00, 0x02, 0x00])
  const view = raw.subarray(1)
  t.equal(view.byteOffset % 2, 1)
  t.same([...bufferToInt16(view)], [1, 2])
  t.throws(() => bufferToInt16(Buffer.alloc(3)), RangeError)
})

t.test('float conversion round trips exactly and clips', async (t) => {
  const x = Int16Array.from({ length: 65536 }, (_, i) => i - 32768)
  t.same([...float32ToInt16(int16ToFloat32(x))], [...x])
  t.same([...float32ToInt16(Float32Array.from([1.5, -1.5, 0.5]))], [32767, -32768, 16384])
  const out = new Float32Array(10)
  t.equal(int16ToFloat32(Int16Array.from([16384]), out)[0], 0.5)
})

t.test('base64 round trip', async (t) => {
  const x = Int16Array.from([0, 1, -1, 300, -300, 32767])
  const b64 = int16ToBase64(x)
  t.equal(b64, Buffer.from(new Uint8Array(x.buffer)).toString('base64'))
  t.same([...base64ToInt16(b64)], [...x])
  t.throws(() => base64ToInt16(Buffer.from([1, 2, 3]).toString('base64')), RangeError)
})

t.test('interleave / deinterleave', async (t) => {
  const l = Int16Array.from([1, 2, 3])
  const r = Int16Array.from([-1, -2, -3])
  const st = interleave([l, r])
  t.same([...st], [1, -1, 2, -2, 3, -3])
  const [l2, r2] = deinterleave(st, 2)
  t.same([...l2!], [...l])
  t.same([...r2!], [...r])
})
