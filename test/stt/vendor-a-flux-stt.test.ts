import t, { type Test } from 'tap'
import { sttVendorAOptionsSchema } from '../../pipeline/options/stt-options.js'
import { createSttStream } from '../../pipeline/vendors/open-vendor.js'
import type { SttEvent } from '../../pipeline/vendors/stt/stt-stream.js'
import { startFakeDeepgram } from '../fakes/deepgram/fake-deepgram.js'
import { EventReader, FAST_TRANSPORT, audioBytes, withoutWords } from './stream-helpers.js'

const KEY = 'dg-flux-key'

async function setup(t: Test, format: 'pcm_16000' | 'ulaw_8000' = 'pcm_16000') {
  const fake = await startFakeDeepgram({ apiKey: KEY })
  t.teardown(() => fake.close())
  const options = sttVendorAOptionsSchema.parse({ model_id: 'flux', keyterms: ['voxgate'] })
  const stream = createSttStream(
    { use: 'stt.vendor_a', options },
    { format, endpoint: { url: fake.url, apiKey: KEY }, transport: FAST_TRANSPORT },
  )
  t.teardown(() => stream.close())
  return { fake, stream, reader: new EventReader<SttEvent>(stream) }
}

t.test('flux: query, turn events, ForceEndTurn, Error, CloseStream', async (t) => {
  const { fake, stream, reader } = await setup(t)
  const conn = await fake.connection(0)
  t.equal(conn.request.url, '/v2/listen?model=flux-general-en&encoding=linear16&sample_rate=16000&keyterm=voxgate')
  t.equal(conn.request.headers.authorization, `Token ${KEY}`)

  stream.pushAudio(audioBytes(640, 3))
  await conn.waitForAudioBytes(640)
  t.same(conn.audio, audioBytes(640, 3))

  conn.sendTurnInfo('StartOfTurn', 'hi')
  conn.sendTurnInfo('Update', 'hi there')
  conn.sendTurnInfo('Update', 'hi there')
  conn.sendTurnInfo('EagerEndOfTurn', 'hi there')
  conn.sendTurnInfo('TurnResumed', 'hi there')
  conn.sendTurnInfo('EndOfTurn', 'hi there friend')
  await reader.waitForType('end_of_turn')
  t.same(withoutWords(reader.events), [
    { type: 'speech_started' },
    { type: 'interim', text: 'hi' },
    { type: 'interim', text: 'hi there' },
    { type: 'final', text: 'hi there friend' },
    { type: 'end_of_turn', text: 'hi there friend' },
  ])

  // ForceEndTurn ends the turn in progress.
  conn.sendTurnInfo('StartOfTurn', 'forced')
  conn.pendingTranscript = 'forced end'
  stream.finalize()
  t.same(await reader.waitForType('end_of_turn', 2000, 5), { type: 'end_of_turn', text: 'forced end' })
  t.same(conn.controls, ['ForceEndTurn'])

  conn.sendFluxError('INTERNAL_SERVER_ERROR', 'something broke')
  t.match(await reader.waitForType('error'), { code: 'vendor_error', fatal: false, vendorCode: 'INTERNAL_SERVER_ERROR' })
  await reader.waitForType('reconnected')
  const second = await fake.connection(1)
  t.equal(second.request.url, conn.request.url)

  await stream.close()
  t.same(second.controls, ['CloseStream'])
  await reader.ended
})

t.test('flux: EndOfTurn words carry their timings, in seconds of the pushed audio', async (t) => {
  const { fake, stream, reader } = await setup(t)
  const conn = await fake.connection(0)
  // One second of audio, the first turn said in it.
  stream.pushAudio(audioBytes(32_000, 1))
  await conn.waitForAudioBytes(32_000)
  conn.sendTurnInfo('StartOfTurn', 'my')
  conn.sendTurnInfo('EndOfTurn', 'my card', [
    { word: 'my', start: 0.2, end: 0.4 },
    { word: 'card', start: 0.45, end: 0.8 },
  ])
  const final = await reader.waitForType('final')
  t.same(final.words, [
    { word: 'my', start: 0.2, end: 0.4 },
    { word: 'card', start: 0.45, end: 0.8 },
  ])
  // Then the vendor drops mid-turn: the new connection's clock starts at the replay, 1 s into the pushed audio.
  stream.pushAudio(audioBytes(16_000, 2))
  await conn.waitForAudioBytes(48_000)
  conn.terminate()
  await reader.waitForType('reconnected')
  const second = await fake.connection(1)
  await second.waitForAudioBytes(16_000)
  second.sendTurnInfo('StartOfTurn', 'four')
  second.sendTurnInfo('EndOfTurn', 'four one', [
    { word: 'four', start: 0.1, end: 0.25 },
    { word: 'one', start: 0.25, end: 0.4 },
  ])
  const next = await reader.waitFor((e) => e.type === 'final' && e.text === 'four one')
  t.same(next.type === 'final' ? next.words : undefined, [
    { word: 'four', start: 1.1, end: 1.25 },
    { word: 'one', start: 1.25, end: 1.4 },
  ])
})

t.test("flux: Deepgram's documented EndOfTurn (changelog 2026-07-02) replayed through the adapter", async (t) => {
  const { fake, stream, reader } = await setup(t)
  const conn = await fake.connection(0)
  stream.pushAudio(audioBytes(32_000, 3))
  await conn.waitForAudioBytes(32_000)
  // The changelog's example payload as published, with the envelope fields the API reference adds to every TurnInfo.
  conn.send({
    type: 'TurnInfo',
    request_id: conn.requestId,
    sequence_id: 1,
    audio_window_start: 0,
    audio_window_end: 1,
    end_of_turn_confidence: 0.91,
    event: 'EndOfTurn',
    turn_index: 0,
    transcript: 'Hello, how can I help you?',
    words: [
      { word: 'Hello,', confidence: 0.96, start: 0.0, end: 0.18 },
      { word: 'how', confidence: 0.98, start: 0.24, end: 0.36 },
      { word: 'can', confidence: 0.99, start: 0.36, end: 0.48 },
      { word: 'I', confidence: 0.97, start: 0.48, end: 0.54 },
      { word: 'help', confidence: 0.99, start: 0.54, end: 0.72 },
      { word: 'you?', confidence: 0.98, start: 0.72, end: 0.96 },
    ],
  })
  await reader.waitForType('end_of_turn')
  t.same(reader.events, [
    {
      type: 'final',
      text: 'Hello, how can I help you?',
      words: [
        { word: 'Hello,', start: 0, end: 0.18 },
        { word: 'how', start: 0.24, end: 0.36 },
        { word: 'can', start: 0.36, end: 0.48 },
        { word: 'I', start: 0.48, end: 0.54 },
        { word: 'help', start: 0.54, end: 0.72 },
        { word: 'you?', start: 0.72, end: 0.96 },
      ],
    },
    { type: 'end_of_turn', text: 'Hello, how can I help you?' },
  ])
})

t.test('flux: ForceEndTurn with no turn in progress is ignored, as Flux does; the next turn is unaffected', async (t) => {
  const { fake, stream, reader } = await setup(t)
  const conn = await fake.connection(0)
  stream.pushAudio(audioBytes(3200, 4))
  await conn.waitForAudioBytes(3200)
  conn.pendingTranscript = 'never said'
  stream.finalize()
  await conn.waitFor(() => conn.controls.includes('ForceEndTurn'), 2000, 'ForceEndTurn')
  conn.sendTurnInfo('StartOfTurn', 'hello')
  conn.pendingTranscript = 'hello there'
  stream.finalize()
  await reader.waitForType('end_of_turn')
  // One socket keeps the fake's messages in order: an answer to the first ForceEndTurn would come first.
  t.same(
    withoutWords(reader.events),
    [
      { type: 'speech_started' },
      { type: 'interim', text: 'hello' },
      { type: 'final', text: 'hello there' },
      { type: 'end_of_turn', text: 'hello there' },
    ],
    'nothing answered the first ForceEndTurn; the second ended the turn in progress',
  )
  t.same(conn.controls, ['ForceEndTurn', 'ForceEndTurn'])
})
