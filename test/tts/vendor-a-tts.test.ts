import t, { type Test } from 'tap'
import { ttsVendorAOptionsSchema } from '../../pipeline/options/tts-options.js'
import { createTtsStream } from '../../pipeline/vendors/open-vendor.js'
import type { TtsEvent, TtsStreamOptions } from '../../pipeline/vendors/tts/tts-stream.js'
import { fakeSampleCount, fakeToneAudio, startFakeElevenLabs, type FakeElevenLabsOptions } from '../fakes/elevenlabs/fake-elevenlabs.js'
import { EventReader, FAST_TRANSPORT, delay } from '../stt/stream-helpers.js'

const KEY = 'xi-test-key'

async function setup(t: Test, extra: Partial<TtsStreamOptions> = {}, fakeOptions: Partial<FakeElevenLabsOptions> = {}) {
  const fake = await startFakeElevenLabs({ apiKey: KEY, ...fakeOptions })
  t.teardown(() => fake.close())
  const options = ttsVendorAOptionsSchema.parse({ voice_id: 'voice123', model_id: 'eleven_flash_v2_5', speed: 1.1 })
  const stream = createTtsStream(
    { use: 'tts.vendor_a', options },
    { outputFormat: 'ulaw_8000', endpoint: { url: fake.url, apiKey: KEY }, transport: FAST_TRANSPORT, ...extra },
  )
  t.teardown(() => stream.close())
  return { fake, stream, reader: new EventReader<TtsEvent>(stream) }
}

function audioOf(events: TtsEvent[], contextId: string): Buffer {
  return Buffer.concat(events.flatMap((e) => (e.type === 'audio' && e.contextId === contextId ? [e.audio] : [])))
}

t.test('multi-context: path, auth, context messages, audio and done', async (t) => {
  const { fake, stream, reader } = await setup(t)
  const conn = await fake.connection(0)
  t.equal(conn.request.url, '/v1/text-to-speech/voice123/multi-stream-input?model_id=eleven_flash_v2_5&output_format=ulaw_8000')
  t.equal(conn.request.headers['xi-api-key'], KEY)

  stream.pushText('turn-1', 'Hello there.')
  stream.pushText('turn-1', 'How can I')
  stream.pushText('turn-1', ' help? ')
  stream.flush('turn-1')
  await reader.waitFor((e) => e.type === 'done' && e.contextId === 'turn-1')
  t.same(conn.messagesFor('turn-1'), [
    { text: ' ', context_id: 'turn-1', voice_settings: { speed: 1.1 } },
    // A finished sentence asks for generation at once; text mid-sentence does not.
    { text: 'Hello there. ', context_id: 'turn-1', flush: true },
    { text: 'How can I ', context_id: 'turn-1' },
    { text: ' help? ', context_id: 'turn-1', flush: true },
    { context_id: 'turn-1', flush: true },
    { context_id: 'turn-1', close_context: true },
  ])
  // Generated in two pieces (one per sentence), continuous per context.
  const samples = fakeSampleCount('ulaw_8000', ' Hello there. ', 20) + fakeSampleCount('ulaw_8000', 'How can I  help? ', 20)
  t.same(audioOf(reader.events, 'turn-1'), fakeToneAudio('ulaw_8000', 0, samples), 'audio decoded from base64 exactly')
  t.equal(reader.events.at(-1)?.type, 'done')

  await stream.close()
  await stream.close()
  t.same(conn.messages.at(-1), { close_socket: true })
  t.equal((await conn.closed).code, 1000)
  await reader.ended
  t.equal(fake.connections.length, 1)
})

t.test('cancel (barge-in) drops audio the vendor still sends; other contexts carry on', async (t) => {
  const { fake, stream, reader } = await setup(t, {}, { chunkIntervalMs: 15, chunkMs: 20 })
  const conn = await fake.connection(0)
  stream.pushText('a', 'This is a long answer that the caller will interrupt halfway through.')
  stream.flush('a')
  await reader.waitFor((e) => e.type === 'audio' && e.contextId === 'a')
  stream.cancel('a')
  const heardBefore = audioOf(reader.events, 'a').length
  await conn.waitForMessage((m) => m.context_id === 'a' && m.close_context === true && m.flush === undefined)
  stream.pushText('a', 'late text is ignored')
  stream.pushText('b', 'Sorry, go ahead.')
  stream.flush('b')
  await reader.waitFor((e) => e.type === 'done' && e.contextId === 'b')
  await delay(50)
  t.equal(audioOf(reader.events, 'a').length, heardBefore, 'no audio of the cancelled context after cancel()')
  t.notOk(
    reader.events.some((e) => e.type === 'done' && e.contextId === 'a'),
    'no done for a cancelled context',
  )
  t.notOk(conn.messagesFor('a').some((m) => m.text === 'late text is ignored '))
  t.ok(audioOf(reader.events, 'b').length > 0)
})

t.test('keep-alive: empty text for open, idle contexts', async (t) => {
  const { fake, stream } = await setup(t, { transport: { ...FAST_TRANSPORT, keepAliveMs: 30 } })
  const conn = await fake.connection(0)
  stream.pushText('slow', 'Let me check')
  await conn.waitFor(() => conn.messagesFor('slow').filter((m) => m.text === '').length >= 2, 2000, 'keep-alives')
  stream.flush('slow')
  await conn.waitForMessage((m) => m.close_context === true)
  const count = conn.messagesFor('slow').filter((m) => m.text === '').length
  await delay(100)
  t.equal(conn.messagesFor('slow').filter((m) => m.text === '').length, count, 'no keep-alive after flush')
})

t.test('vendor drops mid-utterance: context reported lost, next context works on a new socket', async (t) => {
  const { fake, stream, reader } = await setup(t, {}, { chunkIntervalMs: 20, chunkMs: 20 })
  const first = await fake.connection(0)
  stream.pushText('x', 'A sentence that will be cut off by a network failure.')
  stream.flush('x')
  await reader.waitFor((e) => e.type === 'audio')
  first.terminate()
  t.match(await reader.waitFor((e) => e.type === 'error' && e.code === 'tts_context_lost'), { contextId: 'x', fatal: false })
  await reader.waitFor((e) => e.type === 'done' && e.contextId === 'x')
  stream.pushText('y', 'Still here.') // nothing in flight: the socket reopens on demand
  stream.flush('y')
  await reader.waitFor((e) => e.type === 'done' && e.contextId === 'y')
  t.ok(reader.types.includes('reconnected'))
  const second = await fake.connection(1)
  t.same(second.messagesFor('y')[0], { text: ' ', context_id: 'y', voice_settings: { speed: 1.1 } })
})

t.test('idle socket closed by the vendor reopens on the next text', async (t) => {
  const { fake, stream, reader } = await setup(t)
  const first = await fake.connection(0)
  first.close(1000, 'inactivity timeout')
  await first.closed
  await delay(50)
  t.equal(fake.connections.length, 1, 'no reconnect while idle')
  t.notOk(reader.events.some((e) => e.type === 'error'))
  stream.pushText('later', 'Are you still there?')
  stream.flush('later')
  await reader.waitFor((e) => e.type === 'done' && e.contextId === 'later')
  t.equal(fake.connections.length, 2)
})

t.test('vendor error message, bad key and abort', async (t) => {
  const { fake, reader } = await setup(t)
  const conn = await fake.connection(0)
  conn.sendError('voice not found', 'voice_not_found', 'c1')
  t.match(await reader.waitForType('error'), { code: 'vendor_error', fatal: false, contextId: 'c1', vendorCode: 'voice_not_found' })

  const bad = createTtsStream(
    { use: 'tts.vendor_a', options: ttsVendorAOptionsSchema.parse({}) },
    { outputFormat: 'pcm_16000', endpoint: { url: fake.url, apiKey: 'bad' }, transport: FAST_TRANSPORT },
  )
  const badReader = new EventReader<TtsEvent>(bad)
  await badReader.ended
  t.match(badReader.events, [{ type: 'error', code: 'vendor_auth_failed', fatal: true }])
  t.equal(fake.upgrades.filter((u) => u.status === 401).length, 1)

  const controller = new AbortController()
  const aborted = createTtsStream(
    { use: 'tts.vendor_a', options: ttsVendorAOptionsSchema.parse({}) },
    { outputFormat: 'pcm_16000', endpoint: { url: fake.url, apiKey: KEY }, signal: controller.signal, transport: FAST_TRANSPORT },
  )
  const abortedReader = new EventReader<TtsEvent>(aborted)
  const conn3 = await fake.connection(fake.upgrades.filter((u) => u.status === 101).length)
  controller.abort()
  await abortedReader.ended
  await conn3.closed
  aborted.pushText('z', 'nothing')
  await aborted.close()
  t.same(conn3.messages, [])
})
