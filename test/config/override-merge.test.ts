import t from 'tap'
import { mergeConfig } from '../../pipeline/config/merge-config.js'
import { resolveSessionConfig } from '../../pipeline/config/resolve-session-config.js'
import { validateConfigOverride, validatePipelineConfig } from '../../pipeline/config/validate.js'
import { validOf } from './fixtures/config-fixtures.js'

function agentConfig() {
  return validOf({
    type: 'voice',
    clients: { browser: true, carrier: false },
    metadata: { team: 'support', tier: 'gold' },
    session_webhook: {
      url: 'https://hooks.example.com/s',
      custom_headers: { 'X-Key': 'k' },
      events: ['session.start', 'session.end'],
    },
    session_duration_timeout_minutes: 45,
    vad: { enabled: false, buffer_frames: 4, positive_speech_threshold: 0.6 },
    plugins: [
      { use: 'stt.vendor_a', options: { language: 'de', keyterms: ['Anthropic'] } },
      { use: 'turn_manager', options: { base_timeout_ms: 900 } },
      { use: 'agent.llm' },
      { use: 'tts.local' },
    ],
  })
}

t.test('override wins, untouched fields are kept, objects merge recursively', async (t) => {
  const merged = validatePipelineConfig(
    mergeConfig(agentConfig(), {
      clients: { browser: { enabled: false } },
      metadata: { tier: 'silver', locale: 'de-CH' },
      session_webhook: { custom_headers: { 'X-Extra': 'e' } },
      session_duration_timeout_minutes: 10,
      vad: { buffer_frames: 12 },
    }),
  )
  if (!merged.ok) throw new Error(merged.errors.join('; '))
  const c = merged.config
  t.strictSame(c.clients, { browser: false, carrier: false })
  t.strictSame(c.metadata, { team: 'support', tier: 'silver', locale: 'de-CH' })
  t.strictSame(c.session_webhook, {
    url: 'https://hooks.example.com/s',
    custom_headers: { 'X-Key': 'k', 'X-Extra': 'e' },
    events: ['session.start', 'session.end'],
  })
  t.equal(c.session_duration_timeout_minutes, 10)
  t.strictSame(c.vad, { enabled: false, gate_audio: true, buffer_frames: 12, model: 'v5', positive_speech_threshold: 0.6 })
  t.strictSame(c.plugins, agentConfig().plugins, 'plugins kept when the override has none')
  t.equal(c.type, 'voice')
})

t.test('arrays are replaced whole', async (t) => {
  const merged = mergeConfig(agentConfig(), {
    session_webhook: { events: ['session.end'] },
    plugins: [{ use: 'turn_manager' }, { use: 'agent.llm', options: { welcome_message: '' } }],
  }) as { session_webhook: { events: string[] }; plugins: unknown[] }
  t.strictSame(merged.session_webhook.events, ['session.end'])
  t.strictSame(merged.plugins, [{ use: 'turn_manager' }, { use: 'agent.llm', options: { welcome_message: '' } }])
  const c = validOf(merged)
  t.strictSame(
    c.plugins.map((p) => p.use),
    ['turn_manager', 'agent.llm'],
  )
})

t.test('mergeConfig leaves its inputs alone and ignores undefined', async (t) => {
  const base = agentConfig()
  const before = JSON.stringify(base)
  const override = { vad: { buffer_frames: 1 }, metadata: undefined }
  const merged = mergeConfig(base, override) as { vad: { buffer_frames: number }; metadata: unknown }
  t.equal(JSON.stringify(base), before)
  t.strictSame(override, { vad: { buffer_frames: 1 }, metadata: undefined })
  t.equal(merged.vad.buffer_frames, 1)
  t.strictSame(merged.metadata, { team: 'support', tier: 'gold' })
  t.strictSame(mergeConfig(base, undefined), base)
})

t.test('a __proto__ key stays a key and is rejected, never a prototype', async (t) => {
  const override = JSON.parse('{"vad":{"__proto__":{"enabled":true}}}') as unknown
  const merged = mergeConfig(agentConfig(), override) as { vad: Record<string, unknown> }
  t.equal(Object.getPrototypeOf(merged.vad), Object.prototype)
  t.equal(merged.vad.enabled, false)
  const r = validatePipelineConfig(merged)
  t.equal(r.ok, false)
})

t.test('validateConfigOverride accepts any subset and adds no defaults', async (t) => {
  t.strictSame(validateConfigOverride({}), { ok: true, config: {} })
  t.strictSame(validateConfigOverride({ type: 'voice', clients: { browser: { enabled: true } }, vad: { gate_audio: false } }), {
    ok: true,
    config: { type: 'voice', clients: { browser: true }, vad: { gate_audio: false } },
  })
  t.strictSame(validateConfigOverride({ session_webhook: { events: ['session.end'] } }), {
    ok: true,
    config: { session_webhook: { events: ['session.end'] } },
  })
})

t.test('validateConfigOverride checks what it is given', async (t) => {
  t.strictSame(validateConfigOverride({ vad: { buffer_frames: 99 }, clients: { carrier: 'x' }, extra: 1 }), {
    ok: false,
    errors: [
      'clients.carrier must be a boolean or an object { "enabled": boolean }',
      'vad.buffer_frames must be between 0 and 20',
      'extra is not a known field',
    ],
  })
  t.strictSame(validateConfigOverride({ plugins: [{ use: 'agent.llm' }] }), {
    ok: false,
    errors: ['plugins must contain exactly one turn_manager plugin'],
  })
  t.strictSame(validateConfigOverride({ session_webhook: { url: 'http://localhost/x' } }), {
    ok: false,
    errors: ['session_webhook.url must use https'],
  })
  t.equal(validateConfigOverride({ session_webhook: { url: 'http://localhost/x' } }, { allowInsecureLoopback: true }).ok, true)
  t.strictSame(validateConfigOverride('x'), { ok: false, errors: ['config must be an object'] })
})

t.test('resolveSessionConfig: override over agent config, then full validation', async (t) => {
  const r = resolveSessionConfig(agentConfig(), { clients: { browser: { enabled: true } }, session_duration_timeout_minutes: 5 })
  t.equal(r.ok, true)
  if (r.ok) t.equal(r.config.session_duration_timeout_minutes, 5)
  t.strictSame(resolveSessionConfig(agentConfig(), undefined), { ok: true, config: agentConfig() })
  t.strictSame(resolveSessionConfig(agentConfig(), { vad: { negative_speech_threshold: 0.9 } }), {
    ok: false,
    errors: ['vad.negative_speech_threshold must be less than or equal to positive_speech_threshold'],
  })
  t.strictSame(
    resolveSessionConfig(agentConfig(), { clients: { carrier: true }, plugins: [{ use: 'turn_manager' }, { use: 'agent.llm' }] }),
    {
      ok: false,
      errors: [
        'plugins must include an stt.* plugin when clients.carrier is enabled',
        'plugins must include a tts.* plugin when clients.carrier is enabled',
      ],
    },
  )
})
