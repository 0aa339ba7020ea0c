/**
 * The gateway's beep detector on the simulator's voicemail greeting and on speech: the beep is found with its
 * end to 10 ms; speech, keypad tones and short chirps are not beeps.
 */
import t from 'tap'
import { BeepDetector } from '../../pipeline/tones/beep-detector.js'
import { dtmfTones } from '../../pipeline/tones/dtmf-tones.js'
import { decodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { loadFixture } from '../fixtures/audio/signals.js'
import { voicemailGreeting } from '../fakes/carrier/voicemail.js'

/** Feeds `pcm` in 20 ms frames, as the carrier sends it; every beep found, with the ms fed when it was reported. */
function run(pcm: Int16Array): { beep: { startMs: number; endMs: number; frequencyHz: number }; at: number }[] {
  const d = new BeepDetector()
  const found = []
  for (let at = 0; at < pcm.length; at += 160) {
    const beep = d.push(pcm.subarray(at, at + 160))
    if (beep) found.push({ beep, at: d.fedMs })
  }
  return found
}

t.test('the voicemail beep is found, reported within a frame of its end', async (t) => {
  for (const hz of [440, 1000, 1400]) {
    const g = voicemailGreeting(1000, hz)
    const found = run(decodeMulaw(g.audio))
    t.equal(found.length, 1, `${hz} Hz: one beep`)
    const f = found[0]!
    t.ok(Math.abs(f.beep.startMs - g.beepStartMs) <= 10, `${hz} Hz starts at ${f.beep.startMs} (${g.beepStartMs})`)
    t.ok(Math.abs(f.beep.endMs - g.beepEndMs) <= 10, `${hz} Hz ends at ${f.beep.endMs} (${g.beepEndMs})`)
    t.ok(f.at - g.beepEndMs <= 30, `reported ${f.at - g.beepEndMs} ms after the end`)
    t.ok(Math.abs(f.beep.frequencyHz - hz) <= hz * 0.05, `frequency ${f.beep.frequencyHz}`)
  }
})

t.test('speech, DTMF and a 150 ms chirp are not beeps', async (t) => {
  t.same(run(loadFixture('phrase.wav').samples), [], 'phrase.wav')
  t.same(run(loadFixture('two-phrases.wav').samples), [], 'two-phrases.wav')
  t.same(run(dtmfTones('0123456789*#', { sampleRate: 8000, toneMs: 300 })), [], 'keypad tones')
  const chirp = new Int16Array(8000)
  for (let i = 0; i < 1200; i++) chirp[i] = Math.round(8000 * Math.sin((2 * Math.PI * 1000 * i) / 8000))
  t.same(run(chirp), [], 'a 150 ms tone is too short')
})

t.test('a tone that never stops is reported after 2 s', async (t) => {
  const long = new Int16Array(8000 * 4).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 800 * i) / 8000)))
  const found = run(long)
  t.equal(found.length >= 1, true)
  t.equal(found[0]?.beep.endMs, 2000)
})
