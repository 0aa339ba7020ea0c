import t from 'tap'
import { baseConfig, configWithPlugin, errorsOf, SLOT } from './fixtures/config-fixtures.js'

interface Bound {
  /** `root`, `vad` or a plugin `use`. */
  where: string
  field: string
  min: number
  max: number
  /** Smallest step past a bound (1 for integers). */
  step: number
  /** Other options the case needs to stay valid at the bounds. */
  extra?: Record<string, unknown>
}

const BOUNDS: Bound[] = [
  { where: 'root', field: 'session_duration_timeout_minutes', min: 1, max: 1440, step: 0.5 },
  { where: 'vad', field: 'buffer_frames', min: 0, max: 20, step: 1 },
  { where: 'vad', field: 'positive_speech_threshold', min: 0, max: 1, step: 0.01 },
  { where: 'vad', field: 'negative_speech_threshold', min: 0, max: 1, step: 0.01 },
  { where: 'vad', field: 'redemption_frames', min: 0, max: 10, step: 1 },
  { where: 'vad', field: 'min_speech_frames', min: 0, max: 10, step: 1 },
  { where: 'vad', field: 'pre_speech_pad_frames', min: 0, max: 10, step: 1 },
  { where: 'stt.vendor_a', field: 'endpointing_ms', min: 10, max: 5000, step: 1 },
  { where: 'stt.vendor_a', field: 'utterance_end_ms', min: 1000, max: 5000, step: 1 },
  { where: 'stt.vendor_b', field: 'end_of_turn_confidence_threshold', min: 0, max: 1, step: 0.01 },
  { where: 'turn_manager', field: 'base_timeout_ms', min: 500, max: 5000, step: 1 },
  { where: 'turn_manager', field: 'user_silence_timeout_minutes', min: 1, max: 60, step: 0.5 },
  { where: 'turn_manager', field: 'min_interruption_ms', min: 0, max: 3000, step: 1 },
  { where: 'turn_manager', field: 'min_interruption_words', min: 0, max: 10, step: 1 },
  { where: 'turn_manager', field: 'min_timeout_ms', min: 0, max: 5000, step: 1 },
  { where: 'turn_manager', field: 'max_timeout_ms', min: 500, max: 10000, step: 1 },
  { where: 'agent.llm', field: 'temperature', min: 0, max: 2, step: 0.01 },
  { where: 'agent.llm', field: 'max_history_turns', min: 1, max: 200, step: 1 },
  {
    where: 'agent.webhook',
    field: 'time_to_first_byte_ms',
    min: 500,
    max: 60000,
    step: 1,
    extra: { url: 'https://a.example.com/' },
  },
  {
    where: 'agent.webhook',
    field: 'timeout_ms',
    min: 1000,
    max: 600000,
    step: 1,
    extra: { url: 'https://a.example.com/', time_to_first_byte_ms: 500 },
  },
  { where: 'tts.vendor_a', field: 'speed', min: 0.7, max: 1.2, step: 0.01 },
  { where: 'tts.local', field: 'rate', min: 80, max: 450, step: 1 },
]

function build(bound: Bound, value: unknown): { input: Record<string, unknown>; path: string } {
  if (bound.where === 'root') {
    return { input: { ...baseConfig(), [bound.field]: value }, path: bound.field }
  }
  if (bound.where === 'vad') {
    return { input: { ...baseConfig(), vad: { [bound.field]: value } }, path: `vad.${bound.field}` }
  }
  const stage = bound.where === 'turn_manager' ? 'turn_manager' : (bound.where.split('.')[0] as 'stt' | 'agent' | 'tts')
  return {
    input: configWithPlugin(bound.where, { ...bound.extra, [bound.field]: value }),
    path: `plugins[${SLOT[stage]}].options.${bound.field}`,
  }
}

for (const bound of BOUNDS) {
  t.test(`${bound.where} ${bound.field} is bounded ${bound.min}..${bound.max}`, async (t) => {
    const message = (path: string) => `${path} must be between ${bound.min} and ${bound.max}`
    for (const ok of [bound.min, bound.max]) {
      t.strictSame(errorsOf(build(bound, ok).input), [], `accepts ${ok}`)
    }
    for (const bad of [bound.min - bound.step, bound.max + bound.step]) {
      const { input, path } = build(bound, bad)
      t.strictSame(errorsOf(input), [message(path)], `rejects ${bad}`)
    }
    const { input, path } = build(bound, String(bound.min))
    t.strictSame(errorsOf(input), [`${path} must be a number`], 'rejects a numeric string')
  })
}

t.test('frame counts and word counts must be integers', async (t) => {
  t.strictSame(errorsOf({ ...baseConfig(), vad: { buffer_frames: 2.5 } }), ['vad.buffer_frames must be an integer'])
  t.strictSame(errorsOf(configWithPlugin('turn_manager', { min_interruption_words: 1.5 })), [
    'plugins[1].options.min_interruption_words must be an integer',
  ])
  t.strictSame(errorsOf(configWithPlugin('stt.vendor_b', { max_turn_silence: 10.5 })), [
    'plugins[0].options.max_turn_silence must be an integer',
  ])
})

t.test('stt.vendor_b silences are non-negative integers', async (t) => {
  for (const field of ['min_end_of_turn_silence_when_confident', 'max_turn_silence']) {
    t.strictSame(errorsOf(configWithPlugin('stt.vendor_b', { [field]: 0 })), [], `${field} accepts 0`)
    t.strictSame(errorsOf(configWithPlugin('stt.vendor_b', { [field]: 100000 })), [], `${field} has no upper bound`)
    t.strictSame(errorsOf(configWithPlugin('stt.vendor_b', { [field]: -1 })), [`plugins[0].options.${field} must be at least 0`])
  }
})

t.test('user_silence_timeout_minutes null disables the timeout', async (t) => {
  t.strictSame(errorsOf(configWithPlugin('turn_manager', { user_silence_timeout_minutes: null })), [])
})

t.test('vad negative threshold may not exceed the positive one', async (t) => {
  const vad = (positive: number, negative: number) => ({
    ...baseConfig(),
    vad: { positive_speech_threshold: positive, negative_speech_threshold: negative },
  })
  t.strictSame(errorsOf(vad(0.5, 0.5)), [], 'equal is accepted')
  t.strictSame(errorsOf(vad(0.5, 0.35)), [], 'lower is accepted')
  t.strictSame(errorsOf(vad(0.5, 0.51)), ['vad.negative_speech_threshold must be less than or equal to positive_speech_threshold'])
})

t.test('vad frame_samples accepts only the Silero v5 window size', async (t) => {
  for (const ok of [512]) {
    t.strictSame(errorsOf({ ...baseConfig(), vad: { frame_samples: ok } }), [], `accepts ${ok}`)
  }
  for (const bad of [0, 256, 480, 1024, 1536]) {
    t.strictSame(errorsOf({ ...baseConfig(), vad: { frame_samples: bad } }), ['vad.frame_samples must be 512'])
  }
})

t.test('vad model is only v5', async (t) => {
  t.strictSame(errorsOf({ ...baseConfig(), vad: { model: 'v4' } }), ['vad.model must be v5'])
})

t.test('string lengths', async (t) => {
  const llm = (options: Record<string, unknown>) => errorsOf(configWithPlugin('agent.llm', options))
  t.strictSame(llm({ system_prompt: 'x'.repeat(20000) }), [])
  t.strictSame(llm({ system_prompt: 'x'.repeat(20001) }), ['plugins[2].options.system_prompt must be at most 20000 characters'])
  t.strictSame(llm({ welcome_message: '' }), [], 'empty welcome means the agent waits for the caller')
  t.strictSame(llm({ welcome_message: 'x'.repeat(2001) }), ['plugins[2].options.welcome_message must be at most 2000 characters'])
  t.strictSame(llm({ model_id: '' }), ['plugins[2].options.model_id must not be empty'])
  t.strictSame(llm({ provider: 'anthropic' }), ['plugins[2].options.provider must be one of openai, scripted'])
})

t.test('tts option formats', async (t) => {
  const voiceId = (voice_id: string) => errorsOf(configWithPlugin('tts.vendor_a', { voice_id }))
  t.strictSame(voiceId('a'.repeat(64)), [])
  t.strictSame(voiceId('a'.repeat(65)), ['plugins[3].options.voice_id must be 1 to 64 letters or digits'])
  t.strictSame(voiceId('../admin'), ['plugins[3].options.voice_id must be 1 to 64 letters or digits'])
  t.strictSame(voiceId(''), ['plugins[3].options.voice_id must be 1 to 64 letters or digits'])
  const voice = (v: string) => errorsOf(configWithPlugin('tts.local', { voice: v }))
  t.strictSame(voice('pt-br'), [])
  t.strictSame(voice('e'), ['plugins[3].options.voice must be a language code such as en-us'])
  t.strictSame(voice('en_us'), ['plugins[3].options.voice must be a language code such as en-us'])
})

t.test('agent.webhook first byte timeout may not exceed the total timeout', async (t) => {
  t.strictSame(
    errorsOf(configWithPlugin('agent.webhook', { url: 'https://a.example.com/', time_to_first_byte_ms: 5000, timeout_ms: 4000 })),
    ['plugins[2].options.time_to_first_byte_ms must not be greater than timeout_ms'],
  )
})
