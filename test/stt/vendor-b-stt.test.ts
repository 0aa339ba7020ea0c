import t, { type Test } from 'tap'
import { sttVendorBOptionsSchema } from '../../pipeline/options/stt-options.js'
import { createSttStream } from '../../pipeline/vendors/open-vendor.js'
import type { SttEvent, SttStreamOptions } from '../../pipeline/vendors/stt/stt-stream.js'
import { startFakeAssemblyAi } from '../fakes/assemblyai/fake-assemblyai.js'
import { EventReader, FAST_TRANSPORT, audioBytes, delay, withoutWords } from './stream-helpers.js'

const KEY = 'aai-test-key'

async function setup(t: Test, extra: Partial<SttStreamOptions> = {}, wordBoost?: string[]) {
  const fake = await startFakeAssemblyAi({ apiKey: KEY })
  t.teardown(() => fake.close())
  const options = sttVendorBOptionsSchema.parse(wordBoost ? { word_boost: wordBoost } : {})
  const stream = createSttStream(
    { use: 'stt.vendor_b', options },
    { format: 'ulaw_8000', endpoint: { url: fake.url, apiKey: KEY }, transport: FAST_TRANSPORT, ...extra },
  )
  t.teardown(() => stream.close())
  return { fake, stream, reader: new EventReader<SttEvent>(stream) }
}

t.test('v3: query, auth, 50 ms aggregation, turn mapping, ForceEndpoint and Terminate', async (t) => {
  const { fake, stream, reader } = await setup(t, {}, ['voxgate', 'Acme Corp'])
  const conn = await fake.connection(0)
  t.equal(
    conn.request.url,
    '/v3/ws?sample_rate=8000&encoding=pcm_mulaw&speech_model=universal-streaming-english&format_turns=true' +
      '&end_of_turn_confidence_threshold=0.4&min_end_of_turn_silence_when_confident=400&max_turn_silence=1280' +
      `&keyterms_prompt=${encodeURIComponent('["voxgate","Acme Corp"]')}`,
  )
  t.equal(conn.request.headers.authorization, KEY, 'raw key, no scheme')

  const pushed: Buffer[] = []
  for (let i = 0; i < 12; i++) {
    const chunk = audioBytes(160, i) // 20 ms carrier frames
    pushed.push(chunk)
    stream.pushAudio(chunk)
    await delay(2)
  }
  await conn.waitForAudioBytes(1600)
  t.ok(
    conn.chunkDurationsMs.every((ms) => ms >= 50 && ms <= 1000),
    `chunks within 50..1000 ms: ${conn.chunkDurationsMs}`,
  )

  conn.sendSpeechStarted()
  conn.sendPartial('', ['hi'])
  conn.sendPartial('hi', ['my'])
  conn.sendEndOfTurn('hi my name is sonny', 'Hi, my name is Sonny.')
  await reader.waitForType('end_of_turn')
  t.same(withoutWords(reader.events), [
    { type: 'speech_started' },
    { type: 'interim', text: 'hi' },
    { type: 'interim', text: 'hi my' },
    { type: 'interim', text: 'hi my name is sonny' },
    { type: 'final', text: 'Hi, my name is Sonny.' },
    { type: 'end_of_turn', text: 'Hi, my name is Sonny.' },
  ])
  // The fake shares the 240 ms it had received among the five words; ms become seconds of the pushed audio.
  const final = reader.events.find((e) => e.type === 'final')
  t.same(final?.type === 'final' ? final.words : undefined, [
    { word: 'Hi,', start: 0, end: 0.048 },
    { word: 'my', start: 0.048, end: 0.096 },
    { word: 'name', start: 0.096, end: 0.144 },
    { word: 'is', start: 0.144, end: 0.192 },
    { word: 'Sonny.', start: 0.192, end: 0.24 },
  ])

  const tail = audioBytes(160, 99)
  pushed.push(tail)
  stream.pushAudio(tail) // 20 ms stays pending (under the 50 ms minimum)
  await delay(20)
  t.equal(conn.audio.length, 1920, 'a remainder under 50 ms is held back')
  conn.pendingTranscript = 'Yes.'
  stream.finalize() // 20 ms pending -> padded to 50 ms, then ForceEndpoint
  t.same(await reader.waitForType('end_of_turn', 2000, 6), { type: 'end_of_turn', text: 'Yes.' })
  t.same(conn.audio.subarray(0, 2080), Buffer.concat(pushed), 'every pushed byte arrived in order')
  t.same(conn.audio.subarray(2080), Buffer.alloc(240, 0xff), 'padding is mu-law silence')
  t.same(conn.binarySizes.at(-1), 400, '20 ms remainder padded to 50 ms')

  await stream.close()
  await stream.close()
  t.same(conn.controls, ['ForceEndpoint', 'Terminate'])
  t.equal((await conn.closed).code, 1000)
  await reader.ended
  t.equal(fake.connections.length, 1)
  t.notOk(
    conn.messages.some((m) => m.type === 'Error'),
    'the vendor never complained',
  )
})

t.test('v3: drop mid-turn -> reconnect, replay within limits, turn completes', async (t) => {
  const { fake, stream, reader } = await setup(t)
  const first = await fake.connection(0)
  stream.pushAudio(audioBytes(1600, 5)) // 200 ms
  await first.waitForAudioBytes(1600)
  first.sendPartial('book a', ['table'])
  await reader.waitForType('interim')
  first.terminate()
  await reader.waitForType('reconnected')
  const second = await fake.connection(1)
  await second.waitForAudioBytes(1600)
  t.same(second.audio, audioBytes(1600, 5), 'turn audio replayed')
  second.sendEndOfTurn('book a table for two', 'Book a table for two.')
  t.same(await reader.waitForType('end_of_turn'), { type: 'end_of_turn', text: 'Book a table for two.' })
  t.match(
    reader.events.find((e) => e.type === 'error'),
    { code: 'vendor_disconnected', fatal: false },
  )
})

t.test('v3: vendor Error + 3007 close is fatal; bad key is fatal without retry', async (t) => {
  const { fake, reader } = await setup(t)
  const conn = await fake.connection(0)
  conn.sendError(3007, 'Input duration violation: 10 ms. Expected between 50 and 1000 ms')
  await reader.ended
  t.match(reader.events, [
    { type: 'error', code: 'vendor_error', fatal: false, vendorCode: 3007 },
    { type: 'error', code: 'vendor_rejected', fatal: true, vendorCode: 3007 },
  ])
  t.equal(fake.connections.length, 1)

  const badKey = createSttStream(
    { use: 'stt.vendor_b', options: sttVendorBOptionsSchema.parse({}) },
    { format: 'pcm_16000', endpoint: { url: fake.url, apiKey: 'nope' }, transport: FAST_TRANSPORT },
  )
  const badReader = new EventReader<SttEvent>(badKey)
  await badReader.ended
  t.match(badReader.events, [{ type: 'error', code: 'vendor_auth_failed', fatal: true }])
  t.equal(fake.upgrades.filter((u) => u.status === 401).length, 1)
  t.match(fake.upgrades.at(-1)?.url, /encoding=pcm_s16le/)
})

t.test('v3: abort closes everything', async (t) => {
  const controller = new AbortController()
  const { fake, stream, reader } = await setup(t, { signal: controller.signal })
  const conn = await fake.connection(0)
  controller.abort()
  await reader.ended
  await conn.closed
  t.equal(stream.closed, true)
  t.same(conn.controls, [])
})
