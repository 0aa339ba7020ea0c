import alawmulaw from 'alawmulaw'
import t from 'tap'
import { decodeAlaw, encodeAlaw } from '../../pipeline/audio/g711-alaw.js'
import { decodeMulaw, encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { loadFixture, snrDb, sweep, toInt16 } from '../fixtures/audio/signals.js'

const every16 = Int16Array.from({ length: 65536 }, (_, i) => i - 32768)
const every8 = Uint8Array.from({ length: 256 }, (_, i) => i)

const codecs = [
  { name: 'mu-law', encode: encodeMulaw, decode: decodeMulaw, ref: alawmulaw.mulaw },
  { name: 'a-law', encode: encodeAlaw, decode: decodeAlaw, ref: alawmulaw.alaw },
]

for (const c of codecs) {
  t.test(`${c.name} tables are bit-identical to alawmulaw for every input`, async (t) => {
    t.same(Array.from(c.encode(every16)), Array.from(c.ref.encode(every16)))
    t.same(Array.from(c.decode(every8)), Array.from(c.ref.decode(every8)))
  })

  t.test(`${c.name} round trip of a 50 Hz - 3.9 kHz sweep keeps SNR >= 35 dB at -6, -20 and -34 dBFS`, async (t) => {
    for (const amp of [0.5, 0.1, 0.02]) {
      const x = toInt16(sweep(50, 3900, 8000, 16000, amp))
      const snr = snrDb(x, c.decode(c.encode(x)))
      t.ok(snr >= 35, `amp ${amp}: SNR ${snr.toFixed(1)} dB`)
    }
  })

  t.test(`${c.name} round trip of speech keeps SNR >= 34 dB`, async (t) => {
    const { samples } = loadFixture('phrase.wav')
    const snr = snrDb(samples, c.decode(c.encode(samples)))
    t.ok(snr >= 34, `SNR ${snr.toFixed(1)} dB`)
  })

  t.test(`${c.name} writes into a caller buffer and returns a view of the used part`, async (t) => {
    const x = Int16Array.from([0, 1000, -1000, 32767, -32768])
    const bytes = new Uint8Array(16)
    const enc = c.encode(x, bytes)
    t.equal(enc.length, 5)
    t.equal(enc.buffer, bytes.buffer)
    const pcm = new Int16Array(8)
    const dec = c.decode(enc, pcm)
    t.equal(dec.length, 5)
    t.equal(dec.buffer, pcm.buffer)
  })
}

t.test('silence encodes to the standard idle bytes', async (t) => {
  t.equal(encodeMulaw(new Int16Array(1))[0], 0xff)
  t.equal(encodeAlaw(new Int16Array(1))[0], 0xd5)
})
