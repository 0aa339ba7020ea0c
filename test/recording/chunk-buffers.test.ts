import t from 'tap'
import { giveBackChunkBuffer, pooledChunkBytes, takeChunkBuffer } from '../../gateway/recording/chunk-buffers.js'

t.test('a buffer given back is the next one taken of its size, once', async (t) => {
  const a = takeChunkBuffer(8000)
  t.equal(a.length, 8000)
  t.equal(a.buffer.byteLength, 8192, 'sizes are powers of two')
  const before = pooledChunkBytes()
  giveBackChunkBuffer(a)
  t.equal(pooledChunkBytes(), before + 8192)
  giveBackChunkBuffer(a)
  t.equal(pooledChunkBytes(), before + 8192, 'given back twice: kept once, so two chunks never share it')
  const b = takeChunkBuffer(5000)
  t.equal(b.buffer, a.buffer, 'the same memory, reused')
  t.equal(b.length, 5000)
  const c = takeChunkBuffer(5000)
  t.not(c.buffer, a.buffer, 'the next one is new: the first is lent out')
  t.equal(takeChunkBuffer(100).buffer.byteLength, 1024, 'at least 1 KiB')
})

t.test('only buffers taken here are taken back', async (t) => {
  const before = pooledChunkBytes()
  giveBackChunkBuffer(Buffer.alloc(8192))
  giveBackChunkBuffer(new Uint8Array(1024))
  t.equal(pooledChunkBytes(), before)
})

t.test('at most 16 MiB wait for reuse', async (t) => {
  const taken = Array.from({ length: 300 }, () => takeChunkBuffer(65_536))
  for (const b of taken) giveBackChunkBuffer(b)
  t.ok(pooledChunkBytes() <= 16 * 1024 * 1024, `${pooledChunkBytes()} bytes pooled`)
  t.ok(pooledChunkBytes() >= 16 * 1024 * 1024 - 65_536, 'up to the bound')
})
