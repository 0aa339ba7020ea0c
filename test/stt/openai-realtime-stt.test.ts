import t, { type Test } from 'tap'
import { encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { sttOpenAiCompatibleOptionsSchema } from '../../pipeline/options/openai-compatible-options.js'
import type { SttEvent, SttStreamOptions } from '../../pipeline/vendors/stt/stt-stream.js'
import { createSttStream } from '../../pipeline/vendors/open-vendor.js'
import { startFakeOpenAiSpeech } from '../fakes/openai-speech/fake-openai-speech.js'
import { toInt16, tone } from '../fixtures/audio/signals.js'
import { eventually } from '../helpers/eventually.js'
import { EventReader, FAST_TRANSPORT } from './stream-helpers.js'

async function setup(t: Test, options: Record<string, unknown>, format: SttStreamOptions['format'] = 'ulaw_8000') {
  const fake = await startFakeOpenAiSpeech()
  t.teardown(() => fake.close())
  const stream = createSttStream(
    { use: 'stt.openai_compatible', options: sttOpenAiCompatibleOptionsSchema.parse({ mode: 'realtime', ...options }) },
    { format, endpoint: { url: fake.baseUrl, apiKey: '' }, transport: { ...FAST_TRANSPORT, sendChunkMs: 0 } },
  )
  t.teardown(() => stream.close())
  return { fake, stream, reader: new EventReader<SttEvent>(stream) }
}

const ulaw = (ms: number) => Buffer.from(encodeMulaw(toInt16(tone(300, 8000, (ms * 8000) / 1000, 0.3))))
const pcm8k = (ms: number) => Buffer.from(toInt16(tone(300, 8000, (ms * 8000) / 1000, 0.3)).buffer)

t.test('OpenAI flavor: a transcription session with the VAD off, mu-law as it came, commit at the end of speech', async (t) => {
  const { fake, stream, reader } = await setup(t, { model: 'gpt-4o-transcribe', language: 'en', vocabulary: ['Voxgate'] })
  fake.realtimeText = () => 'what are your opening hours'
  const phone = ulaw(400)
  stream.pushAudio(phone)
  stream.finalize()
  await reader.waitForType('end_of_turn')
  const rt = fake.realtime[0]!
  t.equal(rt.flavor, 'openai')
  t.equal(rt.headers.authorization, undefined, 'keyless')
  t.strictSame(rt.events[0], {
    type: 'session.update',
    session: {
      type: 'transcription',
      audio: {
        input: {
          format: { type: 'audio/pcmu' },
          transcription: { model: 'gpt-4o-transcribe', language: 'en', prompt: 'Voxgate' },
          turn_detection: null,
        },
      },
    },
  })
  t.strictSame(
    rt.events.map((e) => e.type),
    ['session.update', ...rt.events.slice(1, -1).map(() => 'input_audio_buffer.append'), 'input_audio_buffer.commit'],
  )
  t.same(rt.turns[0], phone, "the caller's mu-law bytes, unchanged")
  t.strictSame(
    reader.events.map((e) => ('text' in e ? `${e.type}:${e.text}` : e.type)),
    [
      'interim:what',
      'interim:what are',
      'interim:what are your',
      'interim:what are your opening',
      'interim:what are your opening hours',
      'final:what are your opening hours',
      'end_of_turn:what are your opening hours',
    ],
  )
})

t.test('OpenAI flavor: browser PCM goes as audio/pcm at 24 kHz', async (t) => {
  const { fake, stream, reader } = await setup(t, {}, 'pcm_8000')
  stream.pushAudio(pcm8k(500))
  stream.finalize()
  await reader.waitForType('end_of_turn')
  const rt = fake.realtime[0]!
  t.match(rt.events[0], { session: { audio: { input: { format: { type: 'audio/pcm', rate: 24000 } } } } })
  t.equal(rt.turns[0]!.length / 2, 12_000, "500 ms at 24 kHz, the resampler's lookahead sent before the commit")
})

t.test('an end of speech with nothing said since the last commit ends the turn empty, without a commit', async (t) => {
  const { fake, stream, reader } = await setup(t, {})
  stream.pushAudio(ulaw(300))
  stream.finalize()
  await reader.waitForType('end_of_turn')
  stream.finalize()
  await reader.waitFor((e) => e.type === 'end_of_turn' && e.text === '', 3000, 1)
  await new Promise((r) => setTimeout(r, 100))
  t.equal(fake.realtime[0]!.events.filter((e) => e.type === 'input_audio_buffer.commit').length, 1, 'one commit only')
  t.notOk(
    reader.events.some((e) => e.type === 'error'),
    'no error: nothing was lost',
  )
})

t.test('vLLM flavor: session.update {model}, commit to start, PCM16 16 kHz, final commit, transcription.done', async (t) => {
  const { fake, stream, reader } = await setup(t, { realtime_flavor: 'vllm', model: 'mistralai/Voxtral-Mini-4B-Realtime-2602' })
  let n = 0
  fake.realtimeText = () => (++n === 1 ? 'first turn' : 'second turn')
  stream.pushAudio(ulaw(300))
  stream.finalize()
  await reader.waitForType('end_of_turn')
  stream.pushAudio(ulaw(300))
  stream.finalize()
  await reader.waitFor((e) => e.type === 'end_of_turn' && e.text === 'second turn')
  const rt = fake.realtime[0]!
  t.equal(rt.flavor, 'vllm')
  t.strictSame(rt.events[0], { type: 'session.update', model: 'mistralai/Voxtral-Mini-4B-Realtime-2602' })
  t.strictSame(rt.events[1], { type: 'input_audio_buffer.commit' }, 'the utterance starts')
  const commits = rt.events.filter((e) => e.type === 'input_audio_buffer.commit')
  t.strictSame(commits, [
    { type: 'input_audio_buffer.commit' },
    { type: 'input_audio_buffer.commit', final: true },
    { type: 'input_audio_buffer.commit' },
    { type: 'input_audio_buffer.commit', final: true },
  ])
  t.equal(rt.turns[0]!.length / 2, 4800, '300 ms at 16 kHz')
  t.strictSame(
    reader.events.filter((e) => e.type === 'end_of_turn').map((e) => e.text),
    ['first turn', 'second turn'],
  )
})

t.test('a socket that closes while a turn awaits its text is a typed failure, and the stream reconnects', async (t) => {
  const { fake, stream, reader } = await setup(t, {})
  let n = 0
  fake.realtimeText = () => (++n === 1 ? { close: 1011 } : 'after the reconnect')
  stream.pushAudio(ulaw(300))
  stream.finalize()
  const eot = await reader.waitForType('end_of_turn')
  t.equal(eot.text, '')
  t.match(
    reader.events.find((e) => e.type === 'error' && e.code === 'stt_turn_lost'),
    { fatal: false, message: /closed before the turn's text/ },
  )
  await eventually(async () => (fake.realtime.length === 2 ? true : undefined))
  stream.pushAudio(ulaw(300))
  stream.finalize()
  await reader.waitFor((e) => e.type === 'end_of_turn' && e.text === 'after the reconnect')
  t.equal(fake.realtime[1]!.turns[0]!.length, 2400, 'the lost turn was not replayed into the next one')
})

t.test('an empty transcript is a typed failure', async (t) => {
  const { fake, stream, reader } = await setup(t, {})
  fake.realtimeText = () => ''
  stream.pushAudio(ulaw(300))
  stream.finalize()
  await reader.waitForType('end_of_turn')
  t.match(
    reader.events.find((e) => e.type === 'error'),
    { code: 'stt_empty_transcript', fatal: false },
  )
})
