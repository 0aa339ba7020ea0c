import t from 'tap'
import { encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { interleave } from '../../pipeline/audio/pcm16.js'
import { WavFormatError, readWav, wavHeader, writeWav } from '../../pipeline/audio/wav.js'
import { sweep, toInt16 } from '../fixtures/audio/signals.js'

t.test('mono PCM16 round trip', async (t) => {
  const samples = toInt16(sweep(100, 3000, 8000, 8000))
  const file = writeWav({ sampleRate: 8000, channels: 1, samples })
  t.equal(file.length, 44 + samples.byteLength)
  t.equal(file.toString('latin1', 0, 4), 'RIFF')
  t.equal(file.readUInt32LE(4), file.length - 8)
  const back = readWav(file)
  t.equal(back.sampleRate, 8000)
  t.equal(back.channels, 1)
  t.same([...back.samples], [...samples])
})

t.test('stereo PCM16 round trip keeps channels interleaved', async (t) => {
  const l = toInt16(sweep(100, 3000, 16000, 1600))
  const r = toInt16(sweep(3000, 100, 16000, 1600, 0.25))
  const samples = interleave([l, r])
  const file = writeWav({ sampleRate: 16000, channels: 2, samples })
  t.equal(file.readUInt16LE(32), 4, 'block align')
  t.equal(file.readUInt32LE(28), 64000, 'byte rate')
  const back = readWav(file)
  t.equal(back.channels, 2)
  t.equal(back.sampleRate, 16000)
  t.same([...back.samples], [...samples])
})

function chunk(id: string, body: Buffer): Buffer {
  const h = Buffer.alloc(8)
  h.write(id, 0, 'latin1')
  h.writeUInt32LE(body.length, 4)
  return Buffer.concat([h, body, body.length % 2 === 1 ? Buffer.alloc(1) : Buffer.alloc(0)])
}

t.test('reader skips LIST and odd-sized chunks placed before and after fmt', async (t) => {
  const samples = Int16Array.from([1, -1, 1000, -1000, 32767])
  const canonical = writeWav({ sampleRate: 8000, channels: 1, samples })
  const fmt = canonical.subarray(12, 36)
  const data = canonical.subarray(36)
  const list = chunk('LIST', Buffer.from('INFOISFT\x05\x00\x00\x00test\x00', 'latin1'))
  const odd = chunk('junk', Buffer.from([1, 2, 3]))
  const body = Buffer.concat([Buffer.from('WAVE', 'latin1'), list, odd, fmt, chunk('fact', Buffer.alloc(4)), data])
  const head = Buffer.alloc(8)
  head.write('RIFF', 0, 'latin1')
  head.writeUInt32LE(body.length, 4)
  const back = readWav(Buffer.concat([head, body]))
  t.same([...back.samples], [...samples])
})

t.test('reader clamps a streamed (unknown) data size to the bytes present', async (t) => {
  const samples = Int16Array.from([5, 6, 7, 8])
  const file = writeWav({ sampleRate: 8000, channels: 1, samples })
  file.writeUInt32LE(0xffffffff, 40)
  t.same([...readWav(file).samples], [5, 6, 7, 8])
})

t.test('reader decodes G.711 mu-law WAV (format 7)', async (t) => {
  const pcm = toInt16(sweep(100, 3000, 8000, 800))
  const bytes = Buffer.from(encodeMulaw(pcm))
  const h = wavHeader(bytes.length, 8000, 1)
  h.writeUInt16LE(7, 20)
  h.writeUInt16LE(8, 34)
  h.writeUInt16LE(1, 32)
  h.writeUInt32LE(8000, 28)
  const back = readWav(Buffer.concat([h, bytes]))
  t.equal(back.samples.length, pcm.length)
  t.ok(Math.abs(back.samples[100]! - pcm[100]!) < 600)
})

t.test('reader errors carry a stable code', async (t) => {
  t.throws(() => readWav(Buffer.from('not a wav file at all')), { code: 'invalid_wav' })
  const file = writeWav({ sampleRate: 8000, channels: 1, samples: new Int16Array(4) })
  file.writeUInt16LE(24, 34)
  t.throws(() => readWav(file), WavFormatError)
  t.throws(() => readWav(file.subarray(0, 36)), { code: 'invalid_wav' })
})
