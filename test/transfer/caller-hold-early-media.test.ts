/**
 * The hold and a leg's early media: without a `hold` line the leg's first early audio stops the ringback, drops what
 * the caller had queued, and every early frame is played from then on (converted for a browser caller); under a
 * `hold` line, and after the hold ended, early media is not played.
 */
import t from 'tap'
import { silentLogger } from '../../core/log.js'
import { CallerHold, type CallerHoldSide } from '../../gateway/transfer/caller-hold.js'
import type { OutputAudioFormat } from '../../pipeline/index.js'
import { tone } from './bridge-audio-helpers.js'

/** A caller's side that keeps what it was given, in order. */
function side(output: OutputAudioFormat, callerId = '+442071838750') {
  const played: (Buffer | 'clear')[] = []
  const s: CallerHoldSide = {
    log: silentLogger(),
    callerAudio: { output },
    callerId,
    playToCaller: (audio) => void played.push(audio),
    clearCaller: () => void played.push('clear'),
    speakToCaller: async () => Buffer.alloc(0),
  }
  return { s, played }
}

const early = Buffer.from(tone('ulaw_8000', 950, 20))
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms))

t.test('without a hold line the early media replaces the ringback from its first frame', async (t) => {
  const { s, played } = side('ulaw_8000')
  const hold = new CallerHold(s)
  const ac = new AbortController()
  hold.start(undefined, ac.signal)
  t.ok(played.length > 0 && played[0] !== 'clear', 'the ringback plays at once')
  const ringback = played.length
  hold.earlyMedia(early)
  t.equal(played[ringback], 'clear', 'the ringback the caller had queued is dropped')
  t.same(played[ringback + 1], early, 'the early frame is played as it came (mu-law both sides)')
  await wait(250)
  hold.earlyMedia(early)
  t.same(played.slice(ringback + 1), [early, early], 'no ringback after it, only early frames')
  hold.stop()
  const stopped = played.length
  hold.earlyMedia(early)
  t.equal(played.length, stopped, 'nothing once the hold ended')
})

t.test('a browser caller gets the early media as PCM16 16 kHz', async (t) => {
  const { s, played } = side('pcm_16000', '')
  const hold = new CallerHold(s)
  hold.start(undefined, new AbortController().signal)
  hold.earlyMedia(early)
  const out = played.at(-1)
  t.ok(Buffer.isBuffer(out) && out.length === 640, '20 ms of PCM16 at 16 kHz')
  hold.stop()
})

t.test('under a hold line the caller stays on hold: early media is not played', async (t) => {
  const { s, played } = side('ulaw_8000')
  const hold = new CallerHold(s)
  hold.start('Please hold.', new AbortController().signal)
  await wait(50)
  hold.earlyMedia(early)
  t.notOk(
    played.some((p) => p !== 'clear' && p.equals(early)),
    'the early frame never reached the caller',
  )
  hold.stop()
})
