import t, { type Test } from 'tap'
import { sttVendorAOptionsSchema } from '../../pipeline/options/stt-options.js'
import { createSttStream } from '../../pipeline/vendors/open-vendor.js'
import type { SttEvent, SttStreamOptions } from '../../pipeline/vendors/stt/stt-stream.js'
import { webSocketBase } from '../../pipeline/vendors/socket/ws-url.js'
import { startFakeDeepgram } from '../fakes/deepgram/fake-deepgram.js'
import { EventReader, FAST_TRANSPORT, audioBytes, delay, withoutWords } from './stream-helpers.js'

const KEY = 'dg-test-key'

async function setup(t: Test, extra: Partial<SttStreamOptions> = {}, keyterms = ['voxgate', 'barge in']) {
  const fake = await startFakeDeepgram({ apiKey: KEY })
  t.teardown(() => fake.close())
  const options = sttVendorAOptionsSchema.parse({ model_id: 'nova-3', language: 'en', keyterms })
  const stream = createSttStream(
    { use: 'stt.vendor_a', options },
    { format: 'ulaw_8000', endpoint: { url: fake.url, apiKey: KEY }, transport: FAST_TRANSPORT, ...extra },
  )
  t.teardown(() => stream.close())
  return { fake, stream, reader: new EventReader<SttEvent>(stream) }
}

t.test('https and wss bases map to WebSocket URLs', async (t) => {
  t.equal(webSocketBase('https://api.example.com/'), 'wss://api.example.com')
  t.equal(webSocketBase('http://127.0.0.1:9000'), 'ws://127.0.0.1:9000')
  t.equal(webSocketBase('wss://host/prefix'), 'wss://host/prefix')
})

t.test('nova-3: query, auth, audio bytes, transcript mapping, Finalize and CloseStream', async (t) => {
  const { fake, stream, reader } = await setup(t)
  const conn = await fake.connection(0)
  t.equal(
    conn.request.url,
    '/v1/listen?model=nova-3&encoding=mulaw&sample_rate=8000&channels=1&interim_results=true&endpointing=300' +
      '&utterance_end_ms=1000&vad_events=true&smart_format=true&language=en&keyterm=voxgate&keyterm=barge%20in',
  )
  t.equal(conn.request.headers.authorization, `Token ${KEY}`)

  const pushed = [audioBytes(160, 1), audioBytes(160, 2), audioBytes(160, 3), audioBytes(160, 4)]
  stream.pushAudio(pushed[0]!)
  await conn.waitForAudioBytes(160) // audio pushed before the socket opens is sent as one replay frame
  stream.pushAudio(pushed[1]!)
  stream.pushAudio(pushed[2]!)
  stream.pushAudio(pushed[3]!)
  await conn.waitForAudioBytes(640)
  t.same(conn.audio, Buffer.concat(pushed), 'binary audio received equals audio pushed')
  t.same(conn.binarySizes, [160, 480], 'then three 20 ms frames in one 60 ms message (sendChunkMs)')

  conn.sendSpeechStarted()
  conn.sendResults('hello', {})
  conn.sendResults('hello there', { isFinal: true })
  conn.sendResults('how are', {})
  conn.sendResults('how are you', { isFinal: true, speechFinal: true })
  conn.sendUtteranceEnd() // after speech_final: no second end_of_turn
  await reader.waitForType('end_of_turn')
  await delay(30)
  t.same(withoutWords(reader.events), [
    { type: 'speech_started' },
    { type: 'interim', text: 'hello' },
    { type: 'final', text: 'hello there' },
    { type: 'interim', text: 'how are' },
    { type: 'final', text: 'how are you' },
    { type: 'end_of_turn', text: 'hello there how are you' },
  ])
  t.same(
    reader.events.flatMap((e) => (e.type === 'final' ? [e.words?.map((w) => w.word)] : [])),
    [
      ['hello', 'there'],
      ['how', 'are', 'you'],
    ],
    'finals carry their words',
  )

  // UtteranceEnd closes a turn whose last final had no speech_final.
  conn.sendResults('one more', { isFinal: true })
  conn.sendUtteranceEnd()
  t.same(await reader.waitForType('end_of_turn', 2000, 6), { type: 'end_of_turn', text: 'one more' })

  conn.pendingTranscript = 'pressed the button'
  stream.finalize()
  await conn.waitForMessage((m) => m.type === 'Finalize')
  t.same(await reader.waitForType('end_of_turn', 2000, 8), { type: 'end_of_turn', text: 'pressed the button' })

  await stream.close()
  await stream.close()
  t.same(conn.controls, ['Finalize', 'CloseStream'], 'control messages in order')
  t.equal((await conn.closed).code, 1000, 'vendor closed after CloseStream')
  await reader.ended
  t.equal(fake.connections.length, 1, 'no reconnect after a graceful close')
  t.equal(stream.closed, true)
})

t.test('nova-3: KeepAlive only while no audio flows', async (t) => {
  const { fake, stream } = await setup(t, { transport: { ...FAST_TRANSPORT, keepAliveMs: 40 } })
  const conn = await fake.connection(0)
  await conn.waitFor(() => conn.controls.filter((c) => c === 'KeepAlive').length >= 2, 1000, 'two KeepAlives')
  const timer = setInterval(() => stream.pushAudio(audioBytes(160)), 10)
  // Counted from one tick after the audio began: a tick due before the first push (this test noticed the second
  // KeepAlive late, on a busy machine) found the line idle, rightly. Once pushes run every 10 ms, a late loop runs
  // the push due first before the 40 ms tick.
  await delay(100)
  const before = conn.controls.length
  await delay(200)
  clearInterval(timer)
  t.equal(conn.controls.length, before, 'no KeepAlive while audio is sent')
  t.same(conn.messages[0], { type: 'KeepAlive' })
})

t.test('nova-3: vendor drops mid-turn -> reconnect, replay of the turn audio, turn completes', async (t) => {
  const { fake, stream, reader } = await setup(t)
  const first = await fake.connection(0)
  stream.pushAudio(audioBytes(800, 7))
  await first.waitForAudioBytes(800)
  first.sendResults('I want to', { isFinal: true })
  await reader.waitForType('final')
  first.terminate()

  const error = await reader.waitForType('error')
  t.match(error, { code: 'vendor_disconnected', fatal: false })
  await reader.waitForType('reconnected')
  const second = await fake.connection(1)
  await second.waitForAudioBytes(800)
  t.same(second.audio, audioBytes(800, 7), 'the current turn audio was replayed')
  stream.pushAudio(audioBytes(160, 9))
  await second.waitForAudioBytes(960)
  t.same(second.audio.subarray(800), audioBytes(160, 9), 'new audio follows the replay')
  t.equal(second.request.url, first.request.url, 'same query on reconnect')

  second.sendResults('I want to', { isFinal: true })
  second.sendResults('book a table', { isFinal: true, speechFinal: true })
  t.same(await reader.waitForType('end_of_turn'), { type: 'end_of_turn', text: 'I want to book a table' })
})

t.test('nova-3: bad key -> one fatal error, no retry', async (t) => {
  const fake = await startFakeDeepgram({ apiKey: KEY })
  t.teardown(() => fake.close())
  const stream = createSttStream(
    { use: 'stt.vendor_a', options: sttVendorAOptionsSchema.parse({}) },
    { format: 'pcm_16000', endpoint: { url: fake.url, apiKey: 'wrong' }, transport: FAST_TRANSPORT },
  )
  const reader = new EventReader<SttEvent>(stream)
  await reader.ended
  t.same(reader.events, [
    { type: 'error', code: 'vendor_auth_failed', message: 'stt.vendor_a: vendor refused the key (HTTP 401)', fatal: true, vendorCode: 401 },
  ])
  await delay(100)
  t.equal(fake.upgrades.length, 1, 'exactly one upgrade attempt')
  t.equal(fake.upgrades[0]?.status, 401)
  t.match(fake.upgrades[0]?.url, /language=multi/, 'nova-3 defaults to language=multi')
  t.equal(stream.closed, true)
  await stream.close()
})

t.test('nova-3: vendor rejects the audio (1008) -> fatal; unreachable vendor -> bounded retries', async (t) => {
  const { fake, reader } = await setup(t)
  const conn = await fake.connection(0)
  conn.close(1008, 'DATA-0000')
  const error = await reader.waitForType('error')
  t.match(error, { code: 'vendor_rejected', fatal: true, vendorCode: 1008 })
  await reader.ended

  const dead = createSttStream(
    { use: 'stt.vendor_a', options: sttVendorAOptionsSchema.parse({}) },
    { format: 'ulaw_8000', endpoint: { url: 'ws://127.0.0.1:1', apiKey: KEY }, transport: FAST_TRANSPORT },
  )
  const deadReader = new EventReader<SttEvent>(dead)
  await deadReader.ended
  t.match(deadReader.events, [{ type: 'error', code: 'vendor_reconnect_exhausted', fatal: true }])
})

t.test('nova-3: abort signal closes socket and iteration', async (t) => {
  const controller = new AbortController()
  const { fake, stream, reader } = await setup(t, { signal: controller.signal })
  const conn = await fake.connection(0)
  stream.pushAudio(audioBytes(160))
  await conn.waitForAudioBytes(160)
  controller.abort()
  await reader.ended
  await conn.closed
  t.equal(stream.closed, true)
  stream.pushAudio(audioBytes(160))
  stream.finalize()
  await stream.close()
  t.same(conn.controls, [], 'no control message after abort')
  t.equal(fake.connections.length, 1, 'no reconnect after abort')
})

t.test('nova-3: word timings are given in seconds of the pushed audio, also after a reconnect replays the turn', async (t) => {
  const { fake, stream, reader } = await setup(t)
  const first = await fake.connection(0)
  // One second of audio, and an utterance said in it; then the turn ends and the next one starts.
  stream.pushAudio(audioBytes(8000, 1))
  await first.waitForAudioBytes(8000)
  first.sendResults('first turn', { isFinal: true, speechFinal: true }, [
    { word: 'first', start: 0.2, end: 0.5 },
    { word: 'turn', start: 0.5, end: 0.8 },
  ])
  await reader.waitForType('end_of_turn')
  // 0.5 s more (the next turn), then the vendor drops: the new connection's clock starts at the replay.
  stream.pushAudio(audioBytes(4000, 2))
  await first.waitForAudioBytes(12_000)
  first.terminate()
  await reader.waitForType('reconnected')
  const second = await fake.connection(1)
  await second.waitForAudioBytes(4000)
  t.same(second.audio, audioBytes(4000, 2), 'only the current turn is replayed')
  second.sendResults('four one', { isFinal: true }, [
    { word: 'four', start: 0.1, end: 0.25 },
    { word: 'one', start: 0.25, end: 0.4 },
  ])
  const final = await reader.waitFor((e) => e.type === 'final' && e.text === 'four one')
  t.same(
    final.type === 'final' ? final.words : undefined,
    [
      { word: 'four', start: 1.1, end: 1.25 },
      { word: 'one', start: 1.25, end: 1.4 },
    ],
    'the replayed audio began 1 s into the pushed audio',
  )
  const firstFinal = reader.events.find((e) => e.type === 'final')
  t.same(firstFinal?.type === 'final' ? firstFinal.words : undefined, [
    { word: 'first', start: 0.2, end: 0.5 },
    { word: 'turn', start: 0.5, end: 0.8 },
  ])
})

t.test('audio goes out in 60 ms messages; a finalize, a pause and a close send what is held first', async (t) => {
  const { fake, stream } = await setup(t)
  const conn = await fake.connection(0)
  const order = () => conn.frames.map((f) => (f.kind === 'binary' ? f.data.length : String((f.json as { type?: unknown })?.type)))
  // Pushed before the socket opened: the replay sends it when it does.
  stream.pushAudio(audioBytes(160, 9))
  await conn.waitForAudioBytes(160)
  // Four 20 ms frames: three make a message, the fourth is held.
  for (let i = 0; i < 4; i++) stream.pushAudio(audioBytes(160, i))
  await conn.waitForAudioBytes(640)
  t.same(conn.binarySizes, [160, 480])
  // A finalize sends the held frame, then Finalize: the vendor transcribes all the audio before it.
  stream.finalize()
  await conn.waitForMessage((m) => m.type === 'Finalize')
  t.same(order(), [160, 480, 160, 'Finalize'])
  // Audio that stops mid-message goes out on its own, without another push or a finalize.
  stream.pushAudio(audioBytes(320, 7))
  await conn.waitForAudioBytes(1120)
  t.same(conn.binarySizes, [160, 480, 160, 320])
  // A close sends what is held before CloseStream.
  stream.pushAudio(audioBytes(160, 8))
  await stream.close()
  t.same(order().slice(-2), [160, 'CloseStream'])
  const expected = Buffer.concat([9, 0, 1, 2, 3].map((i) => audioBytes(160, i)).concat([audioBytes(320, 7), audioBytes(160, 8)]))
  t.same(conn.audio, expected, 'every byte once, in order')
})

t.test('sendChunkMs 0 puts every push on the wire as it comes', async (t) => {
  const { fake, stream } = await setup(t, { transport: { ...FAST_TRANSPORT, sendChunkMs: 0 } })
  const conn = await fake.connection(0)
  stream.pushAudio(audioBytes(160, 1))
  await conn.waitForAudioBytes(160)
  stream.pushAudio(audioBytes(160, 2))
  stream.pushAudio(audioBytes(160, 3))
  await conn.waitForAudioBytes(480)
  t.same(conn.binarySizes, [160, 160, 160])
})

t.test("nova-3: Deepgram's documented Results, SpeechStarted and Metadata replayed through the adapter", async (t) => {
  const logged: Array<{ level: string; fields: Record<string, unknown> }> = []
  const log = (level: string) => (fields: object) => logged.push({ level, fields: fields as Record<string, unknown> })
  const logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') }
  const { fake, stream, reader } = await setup(t, { logger })
  const conn = await fake.connection(0)
  // 3 s of audio, so the words below lie within what the vendor heard.
  stream.pushAudio(audioBytes(24_000, 5))
  await conn.waitForAudioBytes(24_000)
  // Payloads as published: "Speech Started" and "Utterance End" (Results with punctuated words) pages.
  conn.send({ type: 'SpeechStarted', channel: [0, 1], timestamp: 9.54 })
  conn.send({
    type: 'Results',
    channel_index: [0, 1],
    duration: 1.65,
    start: 0.75,
    is_final: true,
    channel: {
      alternatives: [
        {
          confidence: 0.77905273,
          transcript: 'Testing. 123.',
          words: [
            { confidence: 0.69189453, end: 1.57, punctuated_word: 'Testing.', start: 1.07, word: 'testing' },
            { confidence: 0.77905273, end: 2.395, punctuated_word: '123.', start: 1.895, word: '123' },
          ],
        },
      ],
    },
    metadata: { request_id: conn.requestId, model_info: { name: 'nova-3', version: 'x', arch: 'x' }, model_uuid: 'x' },
  })
  conn.send({ channel: [0, 1], last_word_end: 2.395, type: 'UtteranceEnd' })
  await reader.waitForType('end_of_turn')
  t.same(reader.events, [
    { type: 'speech_started' },
    {
      type: 'final',
      text: 'Testing. 123.',
      words: [
        { word: 'Testing.', start: 1.07, end: 1.57 },
        { word: '123.', start: 1.895, end: 2.395 },
      ],
    },
    { type: 'end_of_turn', text: 'Testing. 123.' },
  ])
  // CloseStream: the vendor's Metadata counts the audio in seconds (Close Stream page, deepgram-js-sdk ListenV1Metadata).
  await stream.close()
  const metadata = logged.find((l) => 'audioSeconds' in l.fields)
  t.match(metadata, { level: 'debug', fields: { audioSeconds: 3, sentSeconds: 3 } }, 'read as seconds, as many as were sent')
})

t.test('the fake: SpeechStarted at the start of speech in seconds, Metadata.duration in seconds', async (t) => {
  const { fake, stream } = await setup(t)
  const conn = await fake.connection(0)
  // 0.5 s of mu-law silence, then 0.5 s of speech-loud samples.
  stream.pushAudio(Buffer.alloc(4000, 0xff))
  stream.pushAudio(Buffer.alloc(4000, 0x00))
  await conn.waitForAudioBytes(8000)
  conn.sendSpeechStarted()
  t.same(conn.sent.at(-1), { type: 'SpeechStarted', channel: [0, 1], timestamp: 0.5 }, 'channel [index, count], timestamp in s')
  await stream.close()
  t.match(conn.sent.at(-1), { type: 'Metadata', duration: 1, channels: 1 }, 'one second of audio, in seconds')
})
