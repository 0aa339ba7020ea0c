import t from 'tap'
import { decodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { bufferToInt16 } from '../../pipeline/audio/pcm16.js'
import { ttsLocalOptionsSchema } from '../../pipeline/options/tts-options.js'
import { loadEspeakEngine, sharedEspeakEngine, type EspeakEngine } from '../../pipeline/vendors/tts/espeak-engine.js'
import { MAX_SENTENCE_CHARS, splitSentences } from '../../pipeline/vendors/tts/espeak-sentences.js'
import { createLocalTtsStream, type LocalTtsStreamOptions } from '../../pipeline/vendors/tts/local-tts.js'
import type { OutputAudioFormat } from '../../pipeline/audio/audio-format.js'
import type { TtsEvent } from '../../pipeline/vendors/tts/tts-stream.js'
import { EventReader, delay } from '../stt/stream-helpers.js'

const LONG_TEXT = [
  'Thanks for calling, I can help you with that.',
  'First, I will need your account number.',
  'Then I will look up your last three orders!',
  'Do you have the number ready?',
  'If not, I can also find you by your email address.',
  'That usually takes a little longer; it is still quick.',
  'Finally, I will read the order status back to you.',
  'Is there anything else I should know before we start?',
].join(' ')

function open(format: OutputAudioFormat, options: object = {}, extra: Partial<LocalTtsStreamOptions> = {}) {
  const stream = createLocalTtsStream(ttsLocalOptionsSchema.parse(options), { outputFormat: format, ...extra })
  return { stream, reader: new EventReader<TtsEvent>(stream) }
}

function samplesOf(events: TtsEvent[], contextId: string, format: OutputAudioFormat): Int16Array {
  const bytes = Buffer.concat(events.flatMap((e) => (e.type === 'audio' && e.contextId === contextId ? [e.audio] : [])))
  return format === 'ulaw_8000' ? decodeMulaw(bytes) : bufferToInt16(new Uint8Array(bytes))
}

function rms(samples: Int16Array): number {
  let sum = 0
  for (const s of samples) sum += s * s
  return samples.length === 0 ? 0 : Math.sqrt(sum / samples.length) / 32768
}

/** The shared engine, wrapped to count synthesis calls. */
async function countingEngine(): Promise<{ engine: EspeakEngine; calls: () => number }> {
  const real = await sharedEspeakEngine()
  let calls = 0
  const engine: EspeakEngine = {
    sampleRate: real.sampleRate,
    loadMs: real.loadMs,
    hasVoice: (voice) => real.hasVoice(voice),
    synthesize: (text, settings) => {
      calls++
      return real.synthesize(text, settings)
    },
  }
  return { engine, calls: () => calls }
}

t.test('splitSentences: boundaries, decimals, run-on text', async (t) => {
  t.same(splitSentences('Hello there. How are'), { sentences: ['Hello there.'], rest: 'How are' })
  t.same(splitSentences('Wait; what? "Yes!" she said.\nNext'), { sentences: ['Wait;', 'what?', '"Yes!"', 'she said.'], rest: 'Next' })
  t.same(
    splitSentences('Pi is 3.14 and example.com works.'),
    { sentences: [], rest: 'Pi is 3.14 and example.com works.' },
    'no boundary without whitespace',
  )
  t.same(splitSentences('It costs 3.5 dollars', true), { sentences: ['It costs 3.5 dollars'], rest: '' })
  t.same(splitSentences('   ', true), { sentences: [], rest: '' })
  const runOn = 'word '.repeat(200)
  const split = splitSentences(runOn)
  t.ok(split.sentences.length >= 2, 'run-on text is cut')
  t.ok(split.sentences.every((s) => s.length <= MAX_SENTENCE_CHARS))
  t.ok(split.rest.length <= MAX_SENTENCE_CHARS)
})

for (const format of ['pcm_16000', 'ulaw_8000'] as const) {
  t.test(`speech in ${format}: audible, plausible duration, done last`, async (t) => {
    const { stream, reader } = open(format)
    t.teardown(() => stream.close())
    const text = 'Hello there. How can I help you today?'
    stream.pushText('turn-1', text)
    stream.flush('turn-1')
    await reader.waitFor((e) => e.type === 'done' && e.contextId === 'turn-1', 15_000)
    t.equal(reader.events.at(-1)?.type, 'done', 'done follows the last audio')
    t.notOk(reader.events.some((e) => e.type === 'error'))
    const rate = format === 'ulaw_8000' ? 8000 : 16_000
    const samples = samplesOf(reader.events, 'turn-1', format)
    const seconds = samples.length / rate
    t.ok(seconds > 1.2 && seconds < 5, `duration ${seconds.toFixed(2)} s fits ${text.length} characters at 175 wpm`)
    t.ok(rms(samples) > 0.02, `RMS ${rms(samples).toFixed(3)} is not silence`)
    const chunk = rate / 10
    const audio = reader.events.filter((e) => e.type === 'audio')
    t.ok(
      audio.every((e) => e.audio.length <= chunk * (format === 'ulaw_8000' ? 1 : 2)),
      '100 ms chunks at most',
    )
  })
}

t.test('rate option changes the duration', async (t) => {
  const durations: number[] = []
  for (const rate of [120, 300]) {
    const { stream, reader } = open('pcm_16000', { rate })
    stream.pushText('a', 'The quick brown fox jumps over the lazy dog.')
    stream.flush('a')
    await reader.waitForType('done', 15_000)
    await stream.close()
    durations.push(samplesOf(reader.events, 'a', 'pcm_16000').length)
  }
  t.ok(durations[0]! > durations[1]! * 1.8, `120 wpm (${durations[0]}) is much slower than 300 wpm (${durations[1]})`)
})

t.test('sentence streaming: a boundary starts synthesis before flush; first audio before the rest is spoken', async (t) => {
  const { engine, calls } = await countingEngine()
  const { stream, reader } = open('pcm_16000', {}, { loadEngine: async () => engine })
  t.teardown(() => stream.close())

  stream.pushText('a', 'Hello')
  await delay(50)
  t.equal(reader.events.length, 0, 'no audio without a sentence boundary')
  stream.pushText('a', ' there. And')
  await reader.waitForType('audio', 15_000)
  t.equal(calls(), 1, 'the first sentence is spoken without waiting for flush')
  t.notOk(reader.events.some((e) => e.type === 'done'))
  stream.flush('a')
  await reader.waitForType('done', 15_000)
  t.equal(calls(), 2, 'flush speaks the remainder')

  let atFirstAudio = -1
  let total = 0
  const second = createLocalTtsStream(ttsLocalOptionsSchema.parse({}), { outputFormat: 'ulaw_8000', loadEngine: async () => engine })
  const before = calls()
  second.pushText('b', LONG_TEXT)
  second.flush('b')
  for await (const event of second) {
    if (event.type === 'audio' && atFirstAudio < 0) atFirstAudio = calls() - before
    if (event.type === 'done') {
      total = calls() - before
      break
    }
  }
  await second.close()
  t.equal(total, splitSentences(LONG_TEXT, true).sentences.length, 'one synthesis call per sentence')
  t.equal(atFirstAudio, 1, 'first audio was yielded after one sentence, before the rest was synthesized')
})

t.test('a sentence spoken before is not synthesized again: same audio, and what a consumer changes stays its own', async (t) => {
  const { engine, calls } = await countingEngine()
  const speak = async (format: OutputAudioFormat, options: object = {}) => {
    const { stream, reader } = open(format, options, { loadEngine: async () => engine })
    stream.pushText('w', 'Welcome to the help line. How can I help?')
    stream.flush('w')
    await reader.waitForType('done', 15_000)
    await stream.close()
    return reader.events.filter((e) => e.type === 'audio')
  }
  const first = await speak('pcm_16000')
  t.equal(calls(), 2, 'two sentences synthesized')
  const firstBytes = Buffer.concat(first.map((e) => (e.type === 'audio' ? e.audio : Buffer.alloc(0))))
  for (const e of first) if (e.type === 'audio') e.audio.fill(0x55)
  const again = await speak('pcm_16000')
  t.equal(calls(), 2, 'the same sentences again: no synthesis')
  const againBytes = Buffer.concat(again.map((e) => (e.type === 'audio' ? e.audio : Buffer.alloc(0))))
  t.ok(againBytes.equals(firstBytes), 'the same audio, not what the first consumer wrote into its chunks')
  t.equal(again.length, first.length, 'the same 100 ms chunks')
  await speak('ulaw_8000')
  t.equal(calls(), 4, 'another format is synthesized')
  await speak('pcm_16000', { rate: 220 })
  t.equal(calls(), 6, 'another rate is synthesized')
})

t.test('cancel drops pending audio and the done of that context; others carry on', async (t) => {
  const stream = createLocalTtsStream(ttsLocalOptionsSchema.parse({}), { outputFormat: 'pcm_16000' })
  t.teardown(() => stream.close())
  stream.pushText('a', LONG_TEXT)
  stream.flush('a')
  const events: TtsEvent[] = []
  let cutAt = -1
  for await (const event of stream) {
    events.push(event)
    if (cutAt < 0 && event.type === 'audio') {
      // Barge-in while the rest of the first sentence and eight more are still to come.
      stream.cancel('a')
      cutAt = events.length
      stream.pushText('a', 'Ignored after cancel.')
      stream.pushText('b', 'Next turn.')
      stream.flush('b')
    }
    if (event.type === 'done') break
  }
  const late = events.slice(cutAt).filter((e) => 'contextId' in e && e.contextId === 'a')
  t.same(late, [], 'nothing for the cancelled context after cancel()')
  t.equal(events.at(-1)?.type, 'done')
  t.match(events.at(-1), { contextId: 'b' })
  t.ok(samplesOf(events, 'b', 'pcm_16000').length > 8000, 'the next context was spoken')
})

t.test('done only after flush; close is idempotent and lets flushed contexts finish', async (t) => {
  const { stream, reader } = open('ulaw_8000')
  stream.pushText('a', 'No boundary yet')
  await delay(100)
  t.same(reader.types, [], 'nothing spoken before flush')
  stream.flush('a')
  stream.flush('a')
  const first = stream.close()
  const second = stream.close()
  t.equal(first, second, 'close returns the same promise')
  t.ok(stream.closed)
  stream.pushText('c', 'Ignored after close.')
  await first
  await reader.ended
  t.equal(reader.events.filter((e) => e.type === 'done').length, 1, 'one done for the flushed context')
  t.equal(reader.events.at(-1)?.type, 'done')
  t.ok(samplesOf(reader.events, 'a', 'ulaw_8000').length > 4000)
  t.notOk(reader.events.some((e) => 'contextId' in e && e.contextId === 'c'))
  await stream.close()
})

t.test('close drops contexts that were never flushed', async (t) => {
  const { stream, reader } = open('pcm_16000')
  stream.pushText('open', 'Never flushed')
  await stream.close()
  await reader.ended
  t.same(reader.types, [])
})

t.test('abort signal ends the stream at once', async (t) => {
  const controller = new AbortController()
  const { stream, reader } = open('pcm_16000', {}, { signal: controller.signal })
  stream.pushText('a', LONG_TEXT)
  stream.flush('a')
  await reader.waitForType('audio', 15_000)
  controller.abort()
  t.ok(stream.closed)
  await reader.ended
  t.notOk(
    reader.events.some((e) => e.type === 'done'),
    'the aborted context never completes',
  )
  await stream.close()

  const aborted = new AbortController()
  aborted.abort()
  const early = open('pcm_16000', {}, { signal: aborted.signal })
  early.stream.pushText('x', 'Hello.')
  await early.reader.ended
  t.same(early.reader.types, [], 'an already aborted signal yields nothing')
})

t.test('unknown voice: fatal error event, no exception', async (t) => {
  const { stream, reader } = open('pcm_16000', { voice: 'xx-nope' })
  stream.pushText('a', 'Hello there.')
  stream.flush('a')
  await reader.ended
  t.equal(reader.events.length, 1)
  t.match(reader.events[0], { type: 'error', code: 'tts_local_voice_unknown', fatal: true })
  t.ok(stream.closed)
  await stream.close()
})

t.test('missing espeak-ng package: tts_local_unavailable, no exception', async (t) => {
  const { stream, reader } = open('pcm_16000', {}, { loadEngine: () => loadEspeakEngine('@echogarden/no-such-espeak-package') })
  stream.pushText('a', 'Hello there.')
  stream.flush('a')
  await reader.ended
  t.equal(reader.events.length, 1)
  t.match(reader.events[0], { type: 'error', code: 'tts_local_unavailable', fatal: true, message: /no-such-espeak-package/ })
  await stream.close()
})

t.test('the engine is shared: one module instance per process', async (t) => {
  t.equal(await sharedEspeakEngine(), await sharedEspeakEngine())
})
