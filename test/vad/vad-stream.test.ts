import t from 'tap'
import { decodeMulaw, encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { VadStream } from '../../pipeline/vad/vad-stream.js'
import { VadBatcher } from '../../pipeline/vad/vad-batcher.js'
import type { VadEvent } from '../../pipeline/vad/vad-events.js'
import { runVad, segments } from '../fixtures/audio/run-vad.js'
import { loadFixture } from '../fixtures/audio/signals.js'

const TOLERANCE_MS = 100

t.test('silence - speech - silence: one segment within 100 ms of the true boundaries', async (t) => {
  const f = loadFixture('phrase.wav')
  const events = await runVad(f.samples)
  const segs = segments(events)
  t.equal(segs.length, 1)
  const s = segs[0]!
  const truth = f.truth.speech[0]!
  t.equal(s.type, 'speech_end')
  t.ok(Math.abs(s.startMs - truth.startMs) <= TOLERANCE_MS, `start ${s.startMs} vs ${truth.startMs}`)
  t.ok(Math.abs(s.endMs - truth.endMs) <= TOLERANCE_MS, `end ${s.endMs} vs ${truth.endMs}`)
  const starts = events.filter((e) => e.type === 'speech_start')
  t.equal(starts.length, 1)
  const frames = events.filter((e) => e.type === 'frame')
  t.equal(frames.length, Math.floor(f.samples.length / 256))
  t.ok(events.findIndex((e) => e.type === 'speech_start') < events.findIndex((e) => e.type === 'speech_real_start'))
})

t.test('a long redemption merges two phrases across a short pause; a short one splits them at the pause', async (t) => {
  const f = loadFixture('two-phrases.wav')
  const [a, b] = f.truth.speech
  const merged = segments(await runVad(f.samples, { redemptionFrames: 10 }))
  t.equal(merged.length, 1, 'redemption 10 -> one segment')
  t.ok(Math.abs(merged[0]!.startMs - a!.startMs) <= TOLERANCE_MS)
  t.ok(Math.abs(merged[0]!.endMs - b!.endMs) <= TOLERANCE_MS)
  const split = segments(await runVad(f.samples, { redemptionFrames: 2 }))
  t.equal(split.length, 2, 'redemption 2 -> two segments')
  t.ok(Math.abs(split[0]!.endMs - a!.endMs) <= TOLERANCE_MS, `first end ${split[0]!.endMs} vs ${a!.endMs}`)
  t.ok(Math.abs(split[1]!.startMs - b!.startMs) <= TOLERANCE_MS, `second start ${split[1]!.startMs} vs ${b!.startMs}`)
})

t.test('a higher min_speech_frames turns a short blip into a misfire', async (t) => {
  const f = loadFixture('blip.wav')
  const low = segments(await runVad(f.samples, { minSpeechFrames: 3 }))
  t.same(
    low.map((s) => s.type),
    ['speech_end'],
  )
  const high = segments(await runVad(f.samples, { minSpeechFrames: 10 }))
  t.same(
    high.map((s) => s.type),
    ['misfire'],
  )
  t.ok(Math.abs(high[0]!.startMs - f.truth.speech[0]!.startMs) <= TOLERANCE_MS)
})

t.test('speech survives a mu-law round trip', async (t) => {
  const f = loadFixture('phrase.wav')
  const segs = segments(await runVad(decodeMulaw(encodeMulaw(f.samples))))
  t.equal(segs.length, 1)
  t.equal(segs[0]!.type, 'speech_end')
  t.ok(Math.abs(segs[0]!.startMs - f.truth.speech[0]!.startMs) <= TOLERANCE_MS)
  t.ok(Math.abs(segs[0]!.endMs - f.truth.speech[0]!.endMs) <= TOLERANCE_MS)
})

t.test('gated audio: buffer_frames of lead-in, then speech frames until the end; segment audio spans pad to end', async (t) => {
  const f = loadFixture('phrase.wav')
  const events = await runVad(f.samples, { bufferFrames: 5, preSpeechPadFrames: 3, keepSegmentAudio: true })
  const start = events.find((e) => e.type === 'speech_start')
  const end = events.find((e) => e.type === 'speech_end')
  const audio = events.filter((e) => e.type === 'audio')
  if (start?.type !== 'speech_start' || end?.type !== 'speech_end') throw new Error('no segment')
  t.equal(audio[0]!.startSample, start.startSample - 5 * 256, 'lead-in starts 5 frames early')
  let at = audio[0]!.startSample
  for (const a of audio) {
    t.equal(a.startSample, at, 'contiguous')
    t.same([...a.samples.subarray(0, 8)], [...f.samples.subarray(at, at + 8)], 'audio matches input')
    at += a.samples.length
  }
  t.equal(at, end.audioEndSample, 'gate closes at the segment end')
  t.equal(end.audioStartSample, start.startSample - 3 * 256)
  t.equal(end.audio!.length, end.audioEndSample - end.audioStartSample)
  t.same([...end.audio!.subarray(0, 16)], [...f.samples.subarray(end.audioStartSample, end.audioStartSample + 16)])
})

t.test('pure noise floor gives frames but no speech; gateAudio false emits no audio', async (t) => {
  const f = loadFixture('phrase.wav')
  const quiet = f.samples.slice(0, 7000)
  const events = await runVad(quiet, { gateAudio: false })
  t.equal(events.filter((e) => e.type !== 'frame').length, 0)
  t.ok(events.every((e) => e.type !== 'frame' || e.probability < 0.25))
})

t.test('a stream pushed far faster than real time skips its backlog instead of queueing without bound', async (t) => {
  const f = loadFixture('phrase.wav')
  const batcher = new VadBatcher()
  const seen = { batches: 0, skipped: 0 }
  const stop = batcher.observe({
    batch: () => {
      seen.batches++
    },
    skipped: (n) => {
      seen.skipped += n
    },
  })
  const vad = new VadStream(() => {}, { maxQueuedFrames: 8, batcher })
  vad.push(f.samples)
  await vad.drain()
  t.ok(vad.skippedFrames > 0)
  t.equal(seen.skipped, vad.skippedFrames, "the batcher's observers hear of every skipped frame (metrics)")
  t.ok(seen.batches > 0, 'and of every batch')
  stop()
  batcher.close()
  t.equal(vad.framesProcessed, Math.floor(f.samples.length / 256))
  vad.close()
  vad.close()
})

t.test("a backlog (audio read late) drains at the model's pace, not one frame per wait for company", async (t) => {
  const f = loadFixture('phrase.wav')
  // Each frame on time would wait 60 s for company; 40 frames pushed at once are all behind but the last.
  const batcher = new VadBatcher(undefined, { maxWaitMs: 60_000 })
  t.teardown(() => batcher.close())
  const vad = new VadStream(() => {}, { batcher })
  t.teardown(() => vad.close())
  vad.push(f.samples.subarray(0, 40 * 256))
  await new Promise((r) => setTimeout(r, 2_000))
  t.equal(vad.framesProcessed, 39, 'every frame with another behind it ran; the newest waits for company')
  t.equal(vad.skippedFrames, 0)
})

t.test('drain honours an aborted signal', async (t) => {
  const vad = new VadStream(() => {}, { maxQueuedFrames: Infinity })
  vad.push(new Int16Array(256 * 4))
  const ac = new AbortController()
  const p = vad.drain({ signal: ac.signal })
  ac.abort(new Error('stop'))
  await t.rejects(p, { message: 'stop' })
  await vad.drain()
  vad.close()
})

t.test('without frame events, audio pushed through one reused buffer gives the same events', async (t) => {
  // The call pipeline decodes each 20 ms frame into the same buffer and turns frame events off.
  const f = loadFixture('phrase.wav')
  const options = { gateAudio: true, bufferFrames: 5 }
  const reference = (await runVad(f.samples, options)).filter((e) => e.type !== 'frame')
  const events: VadEvent[] = []
  const vad = new VadStream((e) => events.push(e.type === 'audio' ? { ...e, samples: e.samples.slice() } : e), {
    ...options,
    frameEvents: false,
  })
  const scratch = new Int16Array(160)
  for (let off = 0; off < f.samples.length; off += 160) {
    const n = Math.min(160, f.samples.length - off)
    scratch.set(f.samples.subarray(off, off + n))
    vad.push(scratch.subarray(0, n))
    scratch.fill(12345) // whatever the stream kept must have been copied
    if (off % 1600 === 0) await vad.drain()
  }
  await vad.end()
  vad.close()
  t.ok(reference.some((e) => e.type === 'audio') && reference.some((e) => e.type === 'speech_end'), 'the reference has audio and a segment')
  t.same(events, reference)
})
