import t from 'tap'
import { DEFAULT_BACKCHANNELS } from '../../pipeline/turn-rules/backchannels.js'
import { DEFAULT_SYSTEM_PROMPT, DEFAULT_WELCOME_MESSAGE } from '../../pipeline/options/agent-options.js'
import { baseConfig, configWithPlugin, validOf } from './fixtures/config-fixtures.js'

t.test('root and vad defaults', async (t) => {
  const config = validOf({ clients: {}, plugins: baseConfig().plugins })
  t.strictSame(config.clients, { browser: true, carrier: false })
  t.equal(config.session_duration_timeout_minutes, 30)
  t.strictSame(config.vad, { enabled: true, gate_audio: true, buffer_frames: 10, model: 'v5' })
  t.notOk('metadata' in config, 'metadata stays absent')
  t.notOk('session_webhook' in config, 'session_webhook stays absent')
  t.notOk('type' in config, 'type stays absent')
})

t.test('clients toggles accept { enabled } and normalise to booleans', async (t) => {
  const config = validOf({ ...baseConfig(), clients: { browser: { enabled: false }, carrier: { enabled: true } } })
  t.strictSame(config.clients, { browser: false, carrier: true })
})

t.test('session_webhook events default to all three', async (t) => {
  const config = validOf({ ...baseConfig(), session_webhook: { url: 'https://hooks.example.com/s' } })
  t.strictSame(config.session_webhook, {
    url: 'https://hooks.example.com/s',
    events: ['session.start', 'session.end', 'session.update'],
  })
})

t.test('stt.vendor_a defaults to nova-3', async (t) => {
  t.strictSame(validOf(baseConfig()).plugins[0], {
    use: 'stt.vendor_a',
    options: { model_id: 'nova-3', language: 'multi', endpointing_ms: 300, utterance_end_ms: 1000 },
  })
  t.strictSame(validOf(configWithPlugin('stt.vendor_a', { model_id: 'flux' })).plugins[0], {
    use: 'stt.vendor_a',
    options: { model_id: 'flux', language: 'en' },
  })
})

t.test('stt.vendor_b defaults', async (t) => {
  t.strictSame(validOf(configWithPlugin('stt.vendor_b')).plugins[0], {
    use: 'stt.vendor_b',
    options: {
      speech_model: 'universal-streaming-english',
      end_of_turn_confidence_threshold: 0.4,
      min_end_of_turn_silence_when_confident: 400,
      max_turn_silence: 1280,
    },
  })
})

t.test('turn_manager defaults', async (t) => {
  t.strictSame(validOf(baseConfig()).plugins[1], {
    use: 'turn_manager',
    options: {
      mode: 'automatic',
      base_timeout_ms: 2000,
      user_silence_timeout_minutes: null,
      disable_interruptions_during_welcome: false,
      trigger: 'automatic',
      allow_interruptions: true,
      min_interruption_ms: 400,
      min_interruption_words: 0,
      min_timeout_ms: 300,
      max_timeout_ms: 4000,
      backchannels: { en: DEFAULT_BACKCHANNELS.en },
      default_country: 'US',
    },
  })
})

t.test('agent.llm defaults', async (t) => {
  t.strictSame(validOf(baseConfig()).plugins[2], {
    use: 'agent.llm',
    options: {
      provider: 'scripted',
      model_id: 'gpt-4o-mini',
      system_prompt: DEFAULT_SYSTEM_PROMPT,
      welcome_message: DEFAULT_WELCOME_MESSAGE,
      max_history_turns: 20,
    },
  })
  t.equal(DEFAULT_WELCOME_MESSAGE, 'Hello! How can I help you today?')
})

t.test('agent.webhook defaults', async (t) => {
  const config = validOf(configWithPlugin('agent.webhook', { url: 'https://api.example.com/agent' }))
  t.strictSame(config.plugins[2], {
    use: 'agent.webhook',
    options: {
      url: 'https://api.example.com/agent',
      events: ['message', 'data', 'welcome'],
      time_to_first_byte_ms: 10000,
      timeout_ms: 120000,
      reply_timeout_ms: 2500,
      fallback: {
        messages: ["I'm sorry, I'm having trouble answering right now. Could you say that again?"],
        max_consecutive_failures: 3,
        on_max_failures: 'continue',
        farewell_message: "I'm sorry, I can't help you right now. Please call again later. Goodbye.",
        transfer_message: 'Let me transfer you to a colleague.',
      },
      holding: { enabled: false, after_ms: 1500, messages: ['One moment.'] },
      debug_failures: false,
    },
  })
})

t.test('tts defaults', async (t) => {
  t.strictSame(validOf(configWithPlugin('tts.vendor_a')).plugins[3], {
    use: 'tts.vendor_a',
    options: { model_id: 'eleven_flash_v2_5', voice_id: '21m00Tcm4TlvDq8EDWM6' },
  })
  t.strictSame(validOf(baseConfig()).plugins[3], { use: 'tts.local', options: { voice: 'en-us', rate: 175 } })
})

t.test('tts.local voice is case-insensitive and stored lower-case', async (t) => {
  t.strictSame(validOf(configWithPlugin('tts.local', { voice: 'EN-GB' })).plugins[3]?.options, { voice: 'en-gb', rate: 175 })
  t.strictSame(validOf(configWithPlugin('tts.local', { voice: 'yue' })).plugins[3]?.options, { voice: 'yue', rate: 175 })
})

t.test('stt, tts and stt+tts are optional for browser-only agents', async (t) => {
  const onlyCore = { clients: {}, plugins: [{ use: 'turn_manager' }, { use: 'agent.llm' }] }
  t.equal(validOf(onlyCore).plugins.length, 2)
})

t.test('validation does not modify its input', async (t) => {
  const input = baseConfig()
  const before = JSON.stringify(input)
  validOf(input)
  t.equal(JSON.stringify(input), before)
})
