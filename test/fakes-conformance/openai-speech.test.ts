// OpenAI's audio API as documented: bodies modelled on the API reference's examples (a verbose_json transcription
// with word timestamps, abridged to one sentence; a streamed transcription, abridged to three deltas; a Realtime
// transcription session's events in the documented order; kept in test/fixtures/openai-speech/) replayed to the
// self-hosted speech adapters, and the speech fake checked against the same bodies, so the fake and the documents agree.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { WebSocketServer } from 'ws'
import { encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { writeWav } from '../../pipeline/audio/wav.js'
import { sttOpenAiCompatibleOptionsSchema } from '../../pipeline/options/openai-compatible-options.js'
import { type FormField, multipartBody } from '../../pipeline/vendors/stt/openai-transcription-codec.js'
import type { SttEvent } from '../../pipeline/vendors/stt/stt-stream.js'
import { createSttStream } from '../../pipeline/vendors/open-vendor.js'
import { startFakeOpenAiSpeech } from '../fakes/openai-speech/fake-openai-speech.js'
import { toInt16, tone } from '../fixtures/audio/signals.js'
import { EventReader } from '../stt/stream-helpers.js'

const fixture = (name: string) => readFileSync(new URL(`../fixtures/openai-speech/${name}`, import.meta.url), 'utf8')
const VERBOSE = fixture('transcription-verbose.json')
const STREAM = fixture('transcription-stream.txt')
const REALTIME = fixture('realtime-transcription-events.jsonl')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line) as Record<string, unknown>)

const phone = (ms: number) => Buffer.from(encodeMulaw(toInt16(tone(300, 8000, (ms * 8000) / 1000, 0.3))))

/** A server answering every transcription with `body` as `type`. */
async function serve(t: Test, type: string, body: string): Promise<string> {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': type })
      res.end(body)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  t.teardown(() => new Promise<void>((r) => server.close(() => r())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
}

function stt(t: Test, url: string, options: Record<string, unknown> = {}) {
  const stream = createSttStream(
    { use: 'stt.openai_compatible', options: sttOpenAiCompatibleOptionsSchema.parse(options) },
    { format: 'ulaw_8000', endpoint: { url, apiKey: '' }, transport: { sendChunkMs: 0 } },
  )
  t.teardown(() => stream.close())
  return { stream, reader: new EventReader<SttEvent>(stream) }
}

t.test("the documented verbose_json: its text ends the turn, its words timed on the stream's clock", async (t) => {
  const { stream, reader } = stt(t, await serve(t, 'application/json', VERBOSE))
  stream.pushAudio(phone(500)) // the segment starts after 0.5 s of earlier speech
  stream.finalize()
  await reader.waitForType('end_of_turn')
  stream.pushAudio(phone(3000))
  stream.finalize()
  await reader.waitFor((e) => e.type === 'end_of_turn', 3000, reader.events.findIndex((e) => e.type === 'end_of_turn') + 1)
  const final = reader.events.filter((e) => e.type === 'final')[1]!
  t.equal(final.text, 'The beach was a popular spot on a hot summer day.')
  t.equal(final.words?.length, 11)
  t.strictSame(final.words?.[1], { word: 'beach', start: 0.5 + 0.23999999463558197, end: 0.5 + 0.6499999761581421 })
})

t.test('the documented streamed transcription: deltas as interim text, the done event as the final', async (t) => {
  const { stream, reader } = stt(t, await serve(t, 'text/event-stream', STREAM), { stream: true })
  stream.pushAudio(phone(500))
  stream.finalize()
  await reader.waitForType('end_of_turn')
  t.strictSame(
    reader.events.map((e) => ('text' in e ? `${e.type}:${e.text}` : e.type)),
    ['interim:I', 'interim:I see', 'interim:I see skies', 'final:I see skies', 'end_of_turn:I see skies'],
  )
})

t.test('the documented Realtime transcription events, in their order, become interim text and the final', async (t) => {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  t.teardown(() => new Promise<void>((r) => wss.close(() => r())))
  wss.on('connection', (ws) => {
    ws.send(JSON.stringify(REALTIME[0]))
    ws.on('message', (data: Buffer) => {
      const event = JSON.parse(data.toString()) as { type: string }
      if (event.type === 'session.update') ws.send(JSON.stringify(REALTIME[1]))
      if (event.type === 'input_audio_buffer.commit') for (const e of REALTIME.slice(2)) ws.send(JSON.stringify(e))
    })
  })
  await new Promise<void>((r) => wss.once('listening', () => r()))
  const { stream, reader } = stt(t, `http://127.0.0.1:${(wss.address() as AddressInfo).port}/v1`, { mode: 'realtime' })
  stream.pushAudio(phone(300))
  stream.finalize()
  await reader.waitForType('end_of_turn')
  t.strictSame(
    reader.events.map((e) => ('text' in e ? `${e.type}:${e.text}` : e.type)),
    ['interim:Hello,', 'interim:Hello, how are you?', 'final:Hello, how are you?', 'end_of_turn:Hello, how are you?'],
  )
})

t.test('the fake answers as the documents do: verbose_json fields, the stream events, the Realtime event order', async (t) => {
  const fake = await startFakeOpenAiSpeech()
  t.teardown(() => fake.close())
  fake.transcribe = () => ({ text: 'Hello, how are you?' })
  fake.realtimeText = () => 'Hello, how are you?'
  // The fake's raw answers to the form the adapter sends.
  const wav = writeWav({ sampleRate: 16000, channels: 1, samples: toInt16(tone(300, 16000, 16000, 0.3)) })
  const answer = async (extra: FormField[]) => {
    const fields: FormField[] = [
      { name: 'file', filename: 'a.wav', contentType: 'audio/wav', data: wav },
      { name: 'model', value: 'whisper-1' },
      ...extra,
    ]
    const res = await fetch(`${fake.baseUrl}/audio/transcriptions`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=B0undary' },
      body: multipartBody(fields, 'B0undary'),
    })
    return res.text()
  }
  const answers = [
    await answer([
      { name: 'response_format', value: 'verbose_json' },
      { name: 'timestamp_granularities[]', value: 'word' },
    ]),
    await answer([{ name: 'stream', value: 'true' }]),
  ]
  const documented = JSON.parse(VERBOSE) as Record<string, unknown>
  const ours = JSON.parse(answers[0]!) as Record<string, unknown>
  for (const key of ['task', 'language', 'duration', 'text', 'words']) t.ok(key in ours, `verbose_json has ${key}`)
  t.strictSame(Object.keys((ours.words as object[])[0]!), Object.keys((documented.words as object[])[0]!), 'a word is {word, start, end}')
  const types = (body: string) =>
    body
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => (JSON.parse(l.slice(6)) as { type: string }).type)
  t.strictSame([...new Set(types(answers[1]!))], [...new Set(types(STREAM))], 'the same stream event types, in the same order')

  const realtime = stt(t, fake.baseUrl, { mode: 'realtime' })
  realtime.stream.pushAudio(phone(300))
  realtime.stream.finalize()
  await realtime.reader.waitForType('end_of_turn')
  // The fake's answer to a commit, as the documents order it (a run of deltas counted once).
  const dedupe = (list: string[]) => list.filter((type, i) => type !== list[i - 1])
  const answered = fake.realtime[0]!.sent.map((e) => String(e.type))
  t.strictSame(dedupe(answered), dedupe(REALTIME.map((e) => String(e.type))), 'the documented event names, in their order')
  t.strictSame(realtime.reader.events.map((e) => e.type).at(-1), 'end_of_turn')
})

t.test("the fake's whisper.cpp flavour answers as the real whisper-server did, and its words reach the stream", async (t) => {
  // whisper-server's answers, recorded from the server built from source: the verbose_json in the fixture, and
  // `{"text":"ategor\n"}` (content-type application/json) for json; a request without a file got 400 `Invalid request`.
  const recorded = JSON.parse(fixture('whisper-server-verbose.json')) as Record<string, unknown>
  const fake = await startFakeOpenAiSpeech({ flavor: 'whisper.cpp' })
  t.teardown(() => fake.close())
  fake.transcribe = () => ({ text: 'one sourdough loaf' })
  const wav = writeWav({ sampleRate: 16000, channels: 1, samples: toInt16(tone(300, 16000, 16000, 0.3)) })
  const post = (fields: FormField[]) =>
    fetch(`${fake.baseUrl}/audio/transcriptions`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=B0undary' },
      body: multipartBody(fields, 'B0undary'),
    })
  const file: FormField = { name: 'file', filename: 'segment.wav', contentType: 'audio/wav', data: wav }
  const verbose = await post([file, { name: 'response_format', value: 'verbose_json' }])
  t.equal(verbose.headers.get('content-type'), 'application/json')
  const ours = (await verbose.json()) as Record<string, unknown>
  t.strictSame(Object.keys(ours), Object.keys(recorded), 'the same fields, in the same order')
  const segment = (body: Record<string, unknown>) => (body.segments as Array<Record<string, unknown>>)[0]!
  t.strictSame(Object.keys(segment(ours)), Object.keys(segment(recorded)), 'a segment has the same fields')
  const word = (body: Record<string, unknown>) => (segment(body).words as Array<Record<string, unknown>>)[0]!
  t.strictSame(Object.keys(word(ours)), Object.keys(word(recorded)), 'a token has the same fields')
  t.equal(ours.text, ' one sourdough loaf\n', 'the text as whisper-server writes it')
  const json = await post([file, { name: 'model', value: 'whisper-1' }])
  t.equal(await json.text(), '{"text":" one sourdough loaf\\n"}')
  const noFile = await post([{ name: 'model', value: 'whisper-1' }])
  t.strictSame([noFile.status, noFile.headers.get('content-type'), await noFile.text()], [400, 'text/plain', 'Invalid request'])

  const { stream, reader } = stt(t, fake.baseUrl)
  stream.pushAudio(phone(1000))
  stream.finalize()
  await reader.waitForType('end_of_turn')
  const final = reader.events.find((e) => e.type === 'final')!
  t.equal(final.text, 'one sourdough loaf')
  t.strictSame(
    final.words?.map((w) => w.word),
    ['one', 'sourdough', 'loaf'],
    'the tokens (" sour", "doug", "h") joined into words',
  )

  // Its bare 400 is the turn's error; it does not cost the next turns their word timings.
  fake.transcribe = () => ({ status: 400 })
  stream.pushAudio(phone(1000))
  stream.finalize()
  const error = await reader.waitForType('error')
  t.match(error, { code: 'vendor_rejected', message: /HTTP 400: Invalid request/ })
  fake.transcribe = () => ({ text: 'thanks' })
  const before = fake.transcriptions.length
  stream.pushAudio(phone(1000))
  stream.finalize()
  await reader.waitFor((e) => e.type === 'final' && e.text === 'thanks')
  t.equal(fake.transcriptions[before]?.fields.response_format, 'verbose_json', 'word timings still asked for')
})
