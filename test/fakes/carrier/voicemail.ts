/**
 * The simulator's recorded voicemail greeting: a spoken greeting (the `phrase.wav` fixture, espeak-ng speech),
 * a short pause, then the beep (1 kHz, 500 ms, -10 dBm0), then silence while the machine records. Mu-law 8 kHz,
 * as the carrier streams it.
 */
import { encodeMulaw } from '../../../pipeline/audio/g711-mulaw.js'
import { loadFixture } from '../../fixtures/audio/signals.js'

/** A greeting and where its beep is, in ms from its start. */
export interface VoicemailGreeting {
  readonly audio: Buffer
  readonly beepStartMs: number
  readonly beepEndMs: number
}

/** The greeting; `afterMs` of silence follow the beep. */
export function voicemailGreeting(afterMs = 3000, beepHz = 1000, beepMs = 500): VoicemailGreeting {
  const speech = loadFixture('phrase.wav').samples
  const pause = Math.round(0.3 * 8000)
  const beep = Math.round((beepMs / 1000) * 8000)
  const after = Math.round((afterMs / 1000) * 8000)
  const pcm = new Int16Array(speech.length + pause + beep + after)
  pcm.set(speech, 0)
  const amplitude = 32767 * 10 ** ((-10 - 3.17) / 20)
  const start = speech.length + pause
  for (let i = 0; i < beep; i++) pcm[start + i] = Math.round(amplitude * Math.sin((2 * Math.PI * beepHz * i) / 8000))
  return {
    audio: Buffer.from(encodeMulaw(pcm)),
    beepStartMs: (start * 1000) / 8000,
    beepEndMs: ((start + beep) * 1000) / 8000,
  }
}
