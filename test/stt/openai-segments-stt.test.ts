import t, { type Test } from 'tap'
import { encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { sttOpenAiCompatibleOptionsSchema } from '../../pipeline/options/openai-compatible-options.js'
import type { SttEvent, SttStreamOptions } from '../../pipeline/vendors/stt/stt-stream.js'
import { createSttStream } from '../../pipeline/vendors/open-vendor.js'
import { startFakeOpenAiSpeech } from '../fakes/openai-speech/fake-openai-speech.js'
import { toInt16, tone } from '../fixtures/audio/signals.js'
import { EventReader } from './stream-helpers.js'

/** `ms` of a 300 Hz tone as a phone sends it (mu-law 8 kHz), or silence. */
function phone(ms: number, loud = true): Buffer {
  const n = (ms * 8000) / 1000
  return loud ? Buffer.from(encodeMulaw(toInt16(tone(300, 8000, n, 0.3)))) : Buffer.alloc(n, 0xff)
}

async function setup(t: Test, options: Record<string, unknown> = {}, extra: Partial<SttStreamOptions> = {}) {
  const fake = await startFakeOpenAiSpeech()
  t.teardown(() => fake.close())
  const stream = createSttStream(
    { use: 'stt.openai_compatible', options: sttOpenAiCompatibleOptionsSchema.parse(options) },
    { format: 'ulaw_8000', endpoint: { url: fake.baseUrl, apiKey: '' }, ...extra },
  )
  t.teardown(() => stream.close())
  return { fake, stream, reader: new EventReader<SttEvent>(stream) }
}

t.test('a segment is one multipart request; its text and word timings end the turn', async (t) => {
  const { fake, stream, reader } = await setup(t, {
    model: 'Systran/faster-whisper-small',
    language: 'en',
    prompt: 'A call to a bakery.',
    vocabulary: ['Voxgate', 'sourdough'],
    temperature: 0,
  })
  fake.transcribe = (r) => ({ text: r.wav.samples.length > 10_000 ? 'one sourdough loaf please' : 'hi' })
  stream.pushAudio(phone(200))
  stream.finalize()
  await reader.waitForType('end_of_turn')
  stream.pushAudio(phone(1000, false)) // what the VAD gate lets through between turns is nothing; a test may still push
  stream.finalize()
  stream.pushAudio(phone(1000))
  stream.finalize()
  await reader.waitFor((e) => e.type === 'end_of_turn' && e.text !== '' && e.text !== 'hi')
  t.equal(fake.transcriptions.length, 2, 'the silent segment was not sent')
  const [first, second] = fake.transcriptions
  t.strictSame(first!.order, ['file', 'model', 'language', 'prompt', 'temperature', 'response_format', 'timestamp_granularities[]'])
  t.strictSame(first!.fields, {
    model: 'Systran/faster-whisper-small',
    language: 'en',
    prompt: 'A call to a bakery. Voxgate, sourdough',
    temperature: '0',
    response_format: 'verbose_json',
    'timestamp_granularities[]': 'word',
  })
  t.equal(first!.fileType, 'audio/wav')
  t.equal(first!.headers.authorization, undefined, 'keyless: no Authorization header')
  t.equal(first!.wav.sampleRate, 16000, 'resampled to 16 kHz by default')
  t.equal(first!.wav.samples.length, 3200, '200 ms at 16 kHz')
  t.equal(second!.wav.samples.length, 16000)
  const finals = reader.events.filter((e) => e.type === 'final')
  t.strictSame(
    finals.map((e) => e.text),
    ['hi', 'one sourdough loaf please'],
  )
  // The fake spreads the words over the file; the stream puts them on its own clock (the segment began at 1.2 s).
  const words = finals[1]!.words!
  t.equal(words.length, 4)
  t.ok(Math.abs(words[0]!.start - 1.2) < 0.01, `first word at 1.2 s: ${words[0]!.start}`)
  t.ok(Math.abs(words[3]!.end - 2.2) < 0.01, `last word ends at 2.2 s: ${words[3]!.end}`)
  t.strictSame(
    reader.events.filter((e) => e.type === 'end_of_turn').map((e) => e.text),
    ['hi', '', 'one sourdough loaf please'],
  )
})

t.test('native 8 kHz, json without word timings when none are wanted, a key when one is set', async (t) => {
  const fake = await startFakeOpenAiSpeech({ apiKey: 'sk-local' })
  t.teardown(() => fake.close())
  const stream = createSttStream(
    { use: 'stt.openai_compatible', options: sttOpenAiCompatibleOptionsSchema.parse({ sample_rate: 8000 }) },
    { format: 'pcm_8000', endpoint: { url: fake.baseUrl, apiKey: 'sk-local' }, wantWords: false },
  )
  t.teardown(() => stream.close())
  const reader = new EventReader<SttEvent>(stream)
  stream.pushAudio(Buffer.from(toInt16(tone(300, 8000, 4000, 0.3)).buffer))
  stream.finalize()
  await reader.waitForType('end_of_turn')
  const r = fake.transcriptions[0]!
  t.equal(r.headers.authorization, 'Bearer sk-local')
  t.equal(r.fields.response_format, 'json')
  t.equal(r.fields['timestamp_granularities[]'], undefined)
  t.equal(r.wav.sampleRate, 8000)
  t.equal(r.wav.samples.length, 4000)
  t.strictSame(
    reader.events.filter((e) => e.type === 'final'),
    [{ type: 'final', text: 'hello' }],
  )
})

t.test('requests run side by side; results come in the order the segments were spoken', async (t) => {
  const { fake, stream, reader } = await setup(t)
  let n = 0
  fake.transcribe = () => (++n === 1 ? { text: 'first, slow', delayMs: 400 } : { text: 'second, quick' })
  stream.pushAudio(phone(500))
  stream.finalize()
  stream.pushAudio(phone(500))
  stream.finalize()
  await reader.waitFor((e) => e.type === 'end_of_turn' && e.text === 'second, quick', 5000)
  t.equal(fake.transcriptions.length, 2)
  t.ok(fake.transcriptions[1]!.at - fake.transcriptions[0]!.at < 300, 'the second request did not wait for the first answer')
  t.strictSame(
    reader.events.map((e) => e.type === 'end_of_turn' && e.text),
    [false, 'first, slow', false, 'second, quick'],
  )
})

t.test('failures are typed error events naming the cause, and the turn still ends', async (t) => {
  const cases: Array<
    [string, Parameters<typeof setup>[1], (fake: Awaited<ReturnType<typeof startFakeOpenAiSpeech>>) => void, string, RegExp]
  > = [
    ['timeout', { timeout_ms: 500 }, (f) => (f.transcribe = () => ({ hang: true })), 'vendor_timeout', /no answer within 500 ms/],
    ['5xx', {}, (f) => (f.transcribe = () => ({ status: 503 })), 'vendor_server_error', /HTTP 503: scripted failure 503/],
    ['non-JSON', {}, (f) => (f.transcribe = () => ({ raw: '<html>Bad gateway</html>' })), 'vendor_protocol_error', /not JSON/],
    ['empty text', {}, (f) => (f.transcribe = () => ({ text: '' })), 'stt_empty_transcript', /no text/],
  ]
  for (const [name, options, script, code, message] of cases) {
    await t.test(name, async (t) => {
      const { fake, stream, reader } = await setup(t, options)
      script(fake)
      stream.pushAudio(phone(300))
      stream.finalize()
      const eot = await reader.waitForType('end_of_turn', 5000)
      t.equal(eot.text, '')
      t.match(
        reader.events.find((e) => e.type === 'error'),
        { code, fatal: false, message },
      )
    })
  }
})

t.test('a refused key is fatal: the stream ends', async (t) => {
  const fake = await startFakeOpenAiSpeech({ apiKey: 'right' })
  t.teardown(() => fake.close())
  const stream = createSttStream(
    { use: 'stt.openai_compatible', options: sttOpenAiCompatibleOptionsSchema.parse({}) },
    { format: 'ulaw_8000', endpoint: { url: fake.baseUrl, apiKey: 'wrong' } },
  )
  const reader = new EventReader<SttEvent>(stream)
  stream.pushAudio(phone(300))
  stream.finalize()
  await reader.ended
  t.match(
    reader.events.find((e) => e.type === 'error'),
    { code: 'vendor_auth_failed', fatal: true, message: /HTTP 401: Incorrect API key/ },
  )
  t.notMatch(JSON.stringify(reader.events), /wrong/, 'the key is not in any event')
})

t.test('413: the segment is split at its quietest frame and both halves are transcribed', async (t) => {
  const { fake, stream, reader } = await setup(t, { sample_rate: 8000 })
  fake.transcribe = (r) => (r.wav.samples.length > 12_000 ? { status: 413 } : { text: `part of ${r.wav.samples.length}` })
  // 1 s of tone, 200 ms of silence, 800 ms of tone: the cut falls in the silence.
  stream.pushAudio(Buffer.concat([phone(1000), phone(200, false), phone(800)]))
  stream.finalize()
  const eot = await reader.waitForType('end_of_turn', 5000)
  const sizes = fake.transcriptions.map((r) => r.wav.samples.length)
  t.equal(sizes[0], 16_000, 'the whole segment first')
  t.ok(sizes[1]! >= 8000 && sizes[1]! <= 9600, `the first half ends in the silence: ${sizes[1]}`)
  t.equal(sizes[1]! + sizes[2]!, 16_000)
  t.equal(eot.text, `part of ${sizes[1]} part of ${sizes[2]}`)
})

t.test('a segment longer than max_segment_seconds goes in parts cut at a quiet frame', async (t) => {
  const { fake, stream, reader } = await setup(t, { max_segment_seconds: 5, sample_rate: 8000 })
  fake.transcribe = (r) => ({ text: `${r.wav.samples.length}` })
  stream.pushAudio(Buffer.concat([phone(3500), phone(100, false), phone(2500)]))
  await reader.waitForType('final', 5000)
  t.equal(fake.transcriptions.length, 1, 'the first part went before the speech ended')
  const first = fake.transcriptions[0]!.wav.samples.length
  t.ok(first >= 28_000 && first <= 28_800, `cut in the pause at 3.5 s: ${first}`)
  stream.finalize()
  const eot = await reader.waitForType('end_of_turn', 5000)
  t.equal(eot.text, String(48_800 - first))
})

t.test('stream: true reads transcript.text.delta events as interim text', async (t) => {
  const { fake, stream, reader } = await setup(t, { stream: true })
  fake.transcribe = () => ({ text: 'we open at nine', deltas: ['we ', 'open ', 'at nine'] })
  stream.pushAudio(phone(300))
  stream.finalize()
  await reader.waitForType('end_of_turn')
  t.equal(fake.transcriptions[0]!.fields.stream, 'true')
  t.equal(fake.transcriptions[0]!.fields.response_format, 'json', 'streamed answers carry no word timings')
  t.strictSame(
    reader.events.map((e) => ('text' in e ? `${e.type}:${e.text}` : e.type)),
    ['interim:we', 'interim:we open', 'interim:we open at nine', 'final:we open at nine', 'end_of_turn:we open at nine'],
  )
})

t.test('a server far behind: 4 requests in flight, 16 segments waiting, a further one fails at once', async (t) => {
  const ended = new AbortController()
  const { fake, stream, reader } = await setup(t, { timeout_ms: 60_000 }, { signal: ended.signal })
  fake.transcribe = () => ({ hang: true })
  for (let i = 0; i < 21; i++) {
    stream.pushAudio(phone(200))
    stream.finalize()
  }
  const error = await reader.waitForType('error')
  t.match(error, { code: 'vendor_timeout', fatal: false, turnFailed: true, message: /too many segments wait/ })
  await new Promise((r) => setTimeout(r, 200))
  t.equal(fake.transcriptions.length, 4, 'never more than 4 requests at once')
  ended.abort()
  await reader.ended
  t.ok(stream.closed, 'the session ending ends the stream and its requests')
})

t.test('a server that refuses verbose_json (400) gets plain json from then on, and the turn is not lost', async (t) => {
  const { fake, stream, reader } = await setup(t)
  fake.formats = ['json', 'text']
  stream.pushAudio(phone(300))
  stream.finalize()
  stream.pushAudio(phone(300))
  stream.finalize()
  await reader.waitFor((e) => e.type === 'end_of_turn' && e.text === 'hello', 3000)
  await reader.waitFor(
    (e) => e.type === 'end_of_turn' && e.text === 'hello',
    3000,
    reader.events.findIndex((e) => e.type === 'end_of_turn') + 1,
  )
  const formats = fake.transcriptions.map((r) => r.fields.response_format)
  t.equal(formats.filter((f) => f === 'json').length, 2, 'both turns transcribed as json')
  t.ok(formats.filter((f) => f === 'verbose_json').length <= 2, 'verbose_json asked at most while the first answers were on their way')
  t.notOk(
    reader.events.some((e) => e.type === 'error'),
    'no turn failed',
  )
})
