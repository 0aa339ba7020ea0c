// AssemblyAI Universal-Streaming v3: the documented example messages, replayed to our stt.vendor_b adapter.
import t, { type Test } from 'tap'
import { sttVendorBOptionsSchema } from '../../pipeline/options/stt-options.js'
import type { SttEvent } from '../../pipeline/vendors/stt/stt-stream.js'
import { createSttStream } from '../../pipeline/vendors/open-vendor.js'
import { EventReader, FAST_TRANSPORT } from '../stt/stream-helpers.js'
import { readFixture, startReplaySocket } from './replay-socket.js'

interface Fixture {
  source: string
  messages: object[]
  error?: { source: string; message: object }
}

/** 20 ms mu-law frames: the words of the examples are timed up to 6.08 s, so the adapter must have sent that much. */
const FRAME = Buffer.alloc(160, 0xff)

async function replay(t: Test, fixture: Fixture, seconds: number) {
  const socket = await startReplaySocket()
  t.teardown(() => socket.close())
  const stream = createSttStream(
    { use: 'stt.vendor_b', options: sttVendorBOptionsSchema.parse({}) },
    { format: 'ulaw_8000', endpoint: { url: socket.url, apiKey: 'k' }, transport: FAST_TRANSPORT },
  )
  t.teardown(() => stream.close())
  const reader = new EventReader<SttEvent>(stream)
  const conn = await socket.connection(0)
  // A second at a time, each on the vendor's clock before the next: words can only be placed in audio it was sent.
  for (let s = 1; s <= seconds; s++) {
    for (let i = 0; i < 50; i++) stream.pushAudio(FRAME)
    await conn.waitForAudioBytes(s * 8000 - 400) // under 50 ms may be held back for the next message
  }
  for (const message of fixture.messages) conn.send(JSON.stringify(message))
  return { conn, reader }
}

t.test('Universal Streaming message sequence: partials are interims, the formatted end of turn is the final', async (t) => {
  const fixture = readFixture<Fixture>('assemblyai/universal-streaming-turns.json')
  const { reader } = await replay(t, fixture, 7)
  await reader.waitFor((e) => e.type === 'end_of_turn' && e.text === 'I am a voice agent.')
  const texts = reader.events.map((e) => (e.type === 'final' ? { type: e.type, text: e.text } : e))
  t.same(texts, [
    { type: 'speech_started' },
    { type: 'interim', text: 'hi' },
    { type: 'interim', text: 'hi my' },
    { type: 'interim', text: 'hi my name' },
    { type: 'interim', text: 'hi my name is' },
    { type: 'interim', text: 'hi my name is son' },
    { type: 'interim', text: 'hi my name is sonny' },
    { type: 'final', text: 'Hi, my name is Sonny.' },
    { type: 'end_of_turn', text: 'Hi, my name is Sonny.' },
    { type: 'speech_started' },
    { type: 'interim', text: 'i' },
    { type: 'interim', text: 'i am' },
    { type: 'interim', text: 'i am a' },
    { type: 'interim', text: 'i am a voice' },
    { type: 'interim', text: 'i am a voice agen' },
    { type: 'interim', text: 'i am a voice agent' },
    { type: 'final', text: 'I am a voice agent.' },
    { type: 'end_of_turn', text: 'I am a voice agent.' },
  ])
  const finals = reader.events.filter((e) => e.type === 'final')
  t.same(
    finals[0]?.type === 'final' ? finals[0].words : undefined,
    [
      { word: 'Hi,', start: 1.92, end: 2 },
      { word: 'my', start: 2.8, end: 2.88 },
      { word: 'name', start: 2.96, end: 3.04 },
      { word: 'is', start: 3.04, end: 3.12 },
      { word: 'Sonny.', start: 3.6, end: 3.84 },
    ],
    'word timings are ms of the session audio, made seconds of the pushed audio',
  )
})

t.test('Message Sequence page: SpeechStarted, a partial, one formatted end of turn, Termination, Error', async (t) => {
  const fixture = readFixture<Fixture>('assemblyai/message-sequence.json')
  const { conn, reader } = await replay(t, fixture, 5)
  await reader.waitForType('end_of_turn')
  t.same(
    reader.events.map((e) => (e.type === 'final' ? { type: e.type, text: e.text, words: e.words?.map((w) => w.word) } : e)),
    [
      { type: 'speech_started' },
      { type: 'interim', text: 'My name is—' },
      { type: 'final', text: 'My name is Sonny.', words: ['My', 'name', 'is', 'Sonny.'] },
      { type: 'end_of_turn', text: 'My name is Sonny.' },
    ],
  )
  if (fixture.error) conn.send(JSON.stringify(fixture.error.message))
  const error = await reader.waitForType('error')
  t.match(error, { fatal: false, vendorCode: 3008, message: /Session Expired: Maximum session duration exceeded/ })
})
