/**
 * The gateway's keypad-tone generator against the simulator's Goertzel receiver: every digit is heard as itself,
 * for as long as configured; speech-like single tones are not digits.
 */
import t from 'tap'
import { dtmfTones, parseDtmfDigits } from '../../pipeline/tones/dtmf-tones.js'
import { decodeMulaw, encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { detectDtmf } from '../fakes/carrier/dtmf-decoder.js'

t.test('all sixteen digits survive G.711 and are decoded in order with their timing', async (t) => {
  const digits = '0123456789*#ABCD'
  const pcm = decodeMulaw(encodeMulaw(dtmfTones(digits, { sampleRate: 8000 })))
  const heard = detectDtmf(pcm)
  t.same(
    heard.map((d) => d.digit),
    [...digits],
  )
  for (const [i, d] of heard.entries()) {
    t.ok(Math.abs(d.startMs - i * 200) <= 5 && Math.abs(d.endMs - d.startMs - 100) <= 5, `${d.digit} at ${d.startMs}-${d.endMs} ms`)
  }
})

t.test('tone and gap lengths as configured, w pauses half a second, level -10 dBm0 per tone', async (t) => {
  const pcm = dtmfTones('1w2', { sampleRate: 8000, toneMs: 60, gapMs: 40 })
  t.equal(pcm.length, (60 + 40 + 500 + 60 + 40) * 8)
  const heard = detectDtmf(pcm)
  t.same(
    heard.map((d) => [d.digit, Math.round(d.startMs), Math.round(d.endMs)]),
    [
      ['1', 0, 60],
      ['2', 600, 660],
    ],
  )
  let peak = 0
  for (const s of pcm) peak = Math.max(peak, Math.abs(s))
  t.ok(peak > 13_500 && peak <= 14_400, `peak ${peak}: two tones of 7,196 at -10 dBm0`)
})

t.test('a steady single tone (the TTS fake speaks 440 Hz) is not a digit', async (t) => {
  const tone = new Int16Array(8000).map((_, i) => Math.round(Math.sin((2 * Math.PI * 440 * i) / 8000) * 0.3 * 32767))
  t.same(detectDtmf(tone), [])
  const oneHalf = new Int16Array(8000).map((_, i) => Math.round(Math.sin((2 * Math.PI * 697 * i) / 8000) * 10_000))
  t.same(detectDtmf(oneHalf), [], 'one frequency of a pair alone is not a digit')
})

t.test('digits are checked: empty, unknown and too many are refused; a-d are upper-cased', async (t) => {
  t.same(parseDtmfDigits(''), { ok: false, problem: 'digits is empty' })
  t.same(parseDtmfDigits('12x'), { ok: false, problem: '"x" is not a keypad digit (0-9, *, #, A-D, w)' })
  t.same(parseDtmfDigits('1'.repeat(65)), { ok: false, problem: 'at most 64 digits' })
  t.same(parseDtmfDigits('*9abw#'), { ok: true, digits: '*9ABw#' })
})
