import t from 'tap'
import { AudioBridge } from '../../gateway/transfer/audio-bridge.js'
import { legFromAsyncSource, type BridgeLeg } from '../../gateway/transfer/bridge-leg.js'
import type { AudioFormat } from '../../pipeline/audio/audio-format.js'
import { concat, decode, measure, toneFrames } from './bridge-audio-helpers.js'

/** A leg driven by the test: `say` is its party speaking, `heard` what the bridge played to it. */
function fakeLeg(inputFormat: AudioFormat, outputFormat: AudioFormat) {
  let listener: ((audio: Uint8Array) => void) | undefined
  const heard: Uint8Array[] = []
  let listens = 0
  let unlistens = 0
  const leg: BridgeLeg = {
    inputFormat,
    outputFormat,
    listen(l) {
      listens++
      listener = l
      return () => {
        unlistens++
        listener = undefined
      }
    },
    send: (frame) => heard.push(frame),
  }
  return {
    leg,
    heard,
    say: (audio: Uint8Array) => listener?.(audio),
    counts: () => ({ listens, unlistens }),
  }
}

t.test('a phone caller and a browser human hear each other, each frame relayed as it arrives', async (t) => {
  const caller = fakeLeg('ulaw_8000', 'ulaw_8000')
  const human = fakeLeg('pcm_8000', 'pcm_16000')
  const bridge = new AudioBridge({ caller: caller.leg, human: human.leg })
  bridge.start()
  const callerTone = toneFrames('ulaw_8000', 600, 10)
  const humanTone = toneFrames('pcm_8000', 1200, 10)
  for (let i = 0; i < 10; i++) {
    caller.say(callerTone[i]!)
    t.equal(human.heard.length, i + 1, 'the human hears the frame before the next arrives')
    human.say(humanTone[i]!)
    t.equal(caller.heard.length, i + 1, 'the caller hears the frame before the next arrives')
  }
  t.ok(human.heard.every((f) => f.length === 640))
  t.ok(caller.heard.every((f) => f.length === 160))
  const toHuman = measure(decode('pcm_16000', concat(human.heard.slice(1))), 16000)
  const toCaller = measure(decode('ulaw_8000', concat(caller.heard.slice(1))), 8000)
  t.ok(Math.abs(toHuman.hz - 600) < 10, `the human hears 600 Hz (${toHuman.hz.toFixed(0)})`)
  t.ok(Math.abs(toCaller.hz - 1200) < 10, `the caller hears 1200 Hz (${toCaller.hz.toFixed(0)})`)
  t.strictSame(bridge.stats(), {
    to_human: { framesIn: 10, bytesIn: 1600, framesOut: 10, bytesOut: 6400, framesMuted: 0 },
    to_caller: { framesIn: 10, bytesIn: 3200, framesOut: 10, bytesOut: 1600, framesMuted: 0 },
  })
})

t.test('muting drops a direction, unmuting relays again from the next frame, the other direction untouched', async (t) => {
  const caller = fakeLeg('ulaw_8000', 'ulaw_8000')
  const human = fakeLeg('ulaw_8000', 'ulaw_8000')
  const bridge = new AudioBridge({ caller: caller.leg, human: human.leg }, ['to_caller'])
  bridge.start()
  t.ok(bridge.isMuted('to_caller'))
  t.notOk(bridge.isMuted('to_human'))
  const frames = toneFrames('ulaw_8000', 500, 4)
  human.say(frames[0]!)
  caller.say(frames[1]!)
  t.equal(caller.heard.length, 0, 'held: the caller does not hear the human')
  t.equal(human.heard.length, 1)
  bridge.mute('to_human')
  caller.say(frames[2]!)
  t.equal(human.heard.length, 1, 'whispering: the human does not hear the caller')
  bridge.unmute('to_caller')
  bridge.unmute('to_human')
  human.say(frames[3]!)
  caller.say(frames[3]!)
  t.strictSame(caller.heard, [frames[3]])
  t.strictSame(human.heard, [frames[1], frames[3]])
  t.match(bridge.stats(), {
    to_caller: { framesIn: 2, framesMuted: 1, framesOut: 1 },
    to_human: { framesIn: 3, framesMuted: 1, framesOut: 2 },
  })
})

t.test('nothing is listened to before start; stop unlistens both legs once and relays nothing after', async (t) => {
  const caller = fakeLeg('ulaw_8000', 'ulaw_8000')
  const human = fakeLeg('ulaw_8000', 'ulaw_8000')
  const bridge = new AudioBridge({ caller: caller.leg, human: human.leg })
  t.strictSame(caller.counts(), { listens: 0, unlistens: 0 })
  bridge.start()
  bridge.start()
  t.strictSame(caller.counts(), { listens: 1, unlistens: 0 }, 'start twice listens once')
  caller.say(toneFrames('ulaw_8000', 500, 1)[0]!)
  const final = bridge.stop()
  t.equal(final.to_human.framesOut, 1)
  t.strictSame(bridge.stop(), final, 'stop twice: the same counts')
  t.strictSame(caller.counts(), { listens: 1, unlistens: 1 })
  t.strictSame(human.counts(), { listens: 1, unlistens: 1 })
  bridge.start()
  t.strictSame(caller.counts(), { listens: 1, unlistens: 1 }, 'a stopped bridge does not start again')
})

t.test('a leg fed by an async source: pieces are relayed as the source yields them; stopping ends the source', async (t) => {
  const frames = toneFrames('ulaw_8000', 800, 3)
  let finished = false
  let release: (() => void) | undefined
  async function* source(): AsyncGenerator<Uint8Array> {
    try {
      for (const f of frames) yield f
      await new Promise<void>((resolve) => {
        release = resolve
      })
      yield frames[0]!
    } finally {
      finished = true
    }
  }
  const errors: unknown[] = []
  const caller = legFromAsyncSource({
    inputFormat: 'ulaw_8000',
    outputFormat: 'ulaw_8000',
    source: source(),
    send: () => undefined,
    onError: (e) => errors.push(e),
  })
  const human = fakeLeg('ulaw_8000', 'ulaw_8000')
  const bridge = new AudioBridge({ caller, human: human.leg })
  bridge.start()
  while (release === undefined) await new Promise((r) => setImmediate(r))
  t.strictSame(human.heard, frames)
  bridge.stop()
  release()
  await new Promise((r) => setImmediate(r))
  t.equal(human.heard.length, 3, 'nothing after stop')
  t.ok(finished, 'the generator ran its finally block')
  t.strictSame(errors, [])
})

t.test('an async source that fails reports the error', async (t) => {
  const errors: unknown[] = []
  // biome-ignore lint/correctness/useYield: a source that fails before its first piece
  async function* failing(): AsyncGenerator<Uint8Array> {
    throw new Error('socket gone')
  }
  const leg = legFromAsyncSource({
    inputFormat: 'ulaw_8000',
    outputFormat: 'ulaw_8000',
    source: failing(),
    send: () => undefined,
    onError: (e) => errors.push(e),
  })
  leg.listen(() => undefined)
  await new Promise((r) => setImmediate(r))
  t.match(errors, [{ message: 'socket gone' }])
})
