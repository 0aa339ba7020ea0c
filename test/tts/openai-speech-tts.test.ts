import t, { type Test } from 'tap'
import type { OutputAudioFormat } from '../../pipeline/audio/audio-format.js'
import { ttsOpenAiCompatibleOptionsSchema } from '../../pipeline/options/openai-compatible-options.js'
import type { TtsEvent } from '../../pipeline/vendors/tts/tts-stream.js'
import { createTtsStream } from '../../pipeline/vendors/open-vendor.js'
import { type FakeSpeechOptions, startFakeOpenAiSpeech } from '../fakes/openai-speech/fake-openai-speech.js'
import { EventReader } from '../stt/stream-helpers.js'

async function setup(
  t: Test,
  options: Record<string, unknown> = {},
  outputFormat: OutputAudioFormat = 'pcm_16000',
  fakeOptions: FakeSpeechOptions = {},
) {
  const fake = await startFakeOpenAiSpeech(fakeOptions)
  t.teardown(() => fake.close())
  const stream = createTtsStream(
    { use: 'tts.openai_compatible', options: ttsOpenAiCompatibleOptionsSchema.parse(options) },
    { outputFormat, endpoint: { url: fake.baseUrl, apiKey: '' } },
  )
  t.teardown(() => stream.close())
  return { fake, stream, reader: new EventReader<TtsEvent>(stream) }
}

const audioBytes = (events: TtsEvent[], id: string) =>
  events.reduce((n, e) => n + (e.type === 'audio' && e.contextId === id ? e.audio.length : 0), 0)

t.test('sentence by sentence: each is a POST /audio/speech whose audio streams out as it comes', async (t) => {
  const { fake, stream, reader } = await setup(t, { model: 'kokoro', voice: 'af_heart', speed: 1.1 }, 'pcm_16000', {
    msPerChar: 20,
    chunkMs: 100,
    chunkIntervalMs: 30,
  })
  stream.pushText('c1', 'Hello there. How ')
  stream.pushText('c1', 'can I help?')
  stream.flush('c1')
  const firstAudio = await reader.waitForType('audio')
  t.equal(fake.speech.length, 1, 'the first sentence went as soon as it was complete')
  t.notOk(
    reader.events.some((e) => e.type === 'done'),
    'first audio came before the sentence had finished',
  )
  t.ok(firstAudio.audio.length > 0)
  await reader.waitForType('done', 5000)
  t.strictSame(
    fake.speech.map((s) => s.json),
    [
      { model: 'kokoro', voice: 'af_heart', input: 'Hello there.', response_format: 'pcm', speed: 1.1 },
      { model: 'kokoro', voice: 'af_heart', input: 'How can I help?', response_format: 'pcm', speed: 1.1 },
    ],
  )
  t.equal(fake.speech[0]!.headers['content-type'], 'application/json')
  t.equal(fake.speech[0]!.headers.authorization, undefined, 'keyless')
  // 24 kHz from the server, 16 kHz out: (12 + 15 characters) x 20 ms = 540 ms = 17,280 bytes of PCM16 at 16 kHz.
  const bytes = audioBytes(reader.events, 'c1')
  t.ok(Math.abs(bytes - 17_280) <= 8, `resampled to the channel's rate: ${bytes}`)
})

t.test('phone calls get mu-law at 8 kHz, from pcm or wav', async (t) => {
  for (const format of ['pcm', 'wav'] as const) {
    await t.test(format, async (t) => {
      const { stream, reader } = await setup(t, { response_format: format }, 'ulaw_8000', { msPerChar: 10 })
      stream.pushText('c', 'Ten chars.')
      stream.flush('c')
      await reader.waitForType('done')
      const bytes = audioBytes(reader.events, 'c')
      t.ok(Math.abs(bytes - 800) <= 4, `100 ms of 8 kHz mu-law: ${bytes}`)
    })
  }
})

t.test('cancel (barge-in) aborts the request in flight and nothing more comes for the context', async (t) => {
  const { fake, stream, reader } = await setup(t, {}, 'pcm_16000', { msPerChar: 50, chunkMs: 50, chunkIntervalMs: 50 })
  stream.pushText('long', 'A rather long sentence that takes a while to speak out loud.')
  stream.flush('long')
  await reader.waitForType('audio')
  stream.cancel('long')
  const at = reader.events.length
  await new Promise((r) => setTimeout(r, 300))
  t.ok(fake.speech[0]!.aborted, 'the server saw the request go away')
  t.strictSame(reader.events.slice(at), [], 'no audio and no done after the cancel')
  stream.pushText('next', 'Sure.')
  stream.flush('next')
  await reader.waitFor((e) => e.type === 'done' && e.contextId === 'next')
})

t.test('a failing server: an error event for the context naming the cause, then done', async (t) => {
  const { fake, stream, reader } = await setup(t)
  fake.speechStatus = 500
  stream.pushText('c', 'Hello. And more.')
  stream.flush('c')
  await reader.waitForType('done')
  t.match(
    reader.events.find((e) => e.type === 'error'),
    {
      code: 'vendor_server_error',
      contextId: 'c',
      fatal: false,
      message: /HTTP 500: scripted speech failure/,
    },
  )
  t.equal(fake.speech.length, 1, 'the rest of the reply is not asked for')
})

t.test('a server that sends no audio in time is a timeout', async (t) => {
  const { stream, reader } = await setup(t, { timeout_ms: 500 }, 'pcm_16000', { firstByteMs: 2000 })
  stream.pushText('c', 'Hello.')
  stream.flush('c')
  await reader.waitForType('done', 3000)
  t.match(
    reader.events.find((e) => e.type === 'error'),
    { code: 'vendor_timeout', message: /no audio within 500 ms/ },
  )
})

t.test('close lets flushed contexts finish', async (t) => {
  const { stream, reader } = await setup(t)
  stream.pushText('c', 'Goodbye.')
  stream.flush('c')
  await stream.close()
  await reader.ended
  t.ok(audioBytes(reader.events, 'c') > 0)
  t.equal(reader.events.at(-1)?.type, 'done')
})
