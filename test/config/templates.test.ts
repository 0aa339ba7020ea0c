import t from 'tap'
import { DEFAULT_TEMPLATE_ID, findTemplate, TEMPLATES, withAvailableVendors, withWebhookUrl } from '../../pipeline/config/templates.js'
import { validatePipelineConfig } from '../../pipeline/config/validate.js'
import { errorsOf, validOf } from './fixtures/config-fixtures.js'

const ALL = { stt: { vendor_a: true, vendor_b: true }, tts: { vendor_a: true } }
const NONE = { stt: { vendor_a: false, vendor_b: false }, tts: { vendor_a: false } }

/** The fallback settings every agent.webhook gets, and its failure reports without the target's body. */
const WEBHOOK_SAFETY_DEFAULTS = {
  debug_failures: false,
  reply_timeout_ms: 2500,
  fallback: {
    messages: ["I'm sorry, I'm having trouble answering right now. Could you say that again?"],
    max_consecutive_failures: 3,
    on_max_failures: 'continue',
    farewell_message: "I'm sorry, I can't help you right now. Please call again later. Goodbye.",
    transfer_message: 'Let me transfer you to a colleague.',
  },
  holding: { enabled: false, after_ms: 1500, messages: ['One moment.'] },
}

t.test('every template validates and is already complete', async (t) => {
  t.ok(TEMPLATES.length >= 3)
  t.equal(new Set(TEMPLATES.map((x) => x.id)).size, TEMPLATES.length, 'ids are unique')
  for (const template of TEMPLATES) {
    const r = validatePipelineConfig(template.config)
    t.strictSame(r, { ok: true, config: template.config }, `${template.id} validates to itself`)
    t.ok(template.name.length > 0 && template.description.length > 0, `${template.id} is described`)
    t.strictSame(JSON.parse(JSON.stringify(template.config)), template.config, `${template.id} is plain JSON`)
  }
})

t.test('required templates and their plugins', async (t) => {
  const uses = (id: string) => findTemplate(id)?.config.plugins.map((p) => p.use)
  t.equal(DEFAULT_TEMPLATE_ID, 'voice-agent-default')
  t.strictSame(uses('voice-agent-default'), ['stt.vendor_a', 'turn_manager', 'agent.llm', 'tts.local'])
  t.strictSame(uses('voice-agent-webhook'), ['stt.vendor_a', 'turn_manager', 'agent.webhook', 'tts.vendor_a'])
  t.strictSame(uses('voice-agent-openai'), ['stt.vendor_a', 'turn_manager', 'agent.llm', 'tts.vendor_a'])
  const def = findTemplate()?.config
  t.match(def?.plugins[0], { options: { model_id: 'nova-3' } })
  t.match(def?.plugins[2], { options: { provider: 'scripted' } })
  t.match(findTemplate('voice-agent-webhook')?.config.plugins, [
    { options: { model_id: 'flux', language: 'en' } },
    {},
    { options: { url: 'https://example.com/api/agent' } },
  ])
  t.match(findTemplate('voice-agent-openai')?.config.plugins[2], { options: { provider: 'openai' } })
  t.equal(findTemplate('nope'), undefined)
})

t.test('findTemplate returns a copy', async (t) => {
  const copy = findTemplate(DEFAULT_TEMPLATE_ID)
  copy?.config.plugins.pop()
  t.equal(findTemplate(DEFAULT_TEMPLATE_ID)?.config.plugins.length, 4)
})

t.test('withWebhookUrl replaces agent.llm with agent.webhook', async (t) => {
  const base = findTemplate(DEFAULT_TEMPLATE_ID)!.config
  const before = JSON.stringify(base)
  const out = withWebhookUrl(base, 'https://backend.example.com/api/agent')
  t.equal(JSON.stringify(base), before, 'input untouched')
  t.strictSame(
    out.plugins.map((p) => p.use),
    ['stt.vendor_a', 'turn_manager', 'agent.webhook', 'tts.local'],
  )
  t.strictSame(out.plugins[2], {
    use: 'agent.webhook',
    options: {
      events: ['message', 'data', 'welcome'],
      time_to_first_byte_ms: 10000,
      timeout_ms: 120000,
      ...WEBHOOK_SAFETY_DEFAULTS,
      url: 'https://backend.example.com/api/agent',
    },
  })
  t.strictSame(validOf(out), out, 'the result is valid and complete')
  t.strictSame(out.plugins[0], base.plugins[0], 'other plugins kept')
})

t.test('withWebhookUrl keeps the other options of an existing agent.webhook', async (t) => {
  const base = validOf({
    clients: {},
    plugins: [
      { use: 'turn_manager' },
      {
        use: 'agent.webhook',
        options: { url: 'https://old.example.com/', events: ['message'], custom_headers: { 'X-A': '1' }, timeout_ms: 30000 },
      },
    ],
  })
  const out = withWebhookUrl(base, 'https://new.example.com/hook')
  t.strictSame(out.plugins[1], {
    use: 'agent.webhook',
    options: {
      url: 'https://new.example.com/hook',
      events: ['message'],
      custom_headers: { 'X-A': '1' },
      time_to_first_byte_ms: 10000,
      timeout_ms: 30000,
      ...WEBHOOK_SAFETY_DEFAULTS,
    },
  })
})

t.test('withWebhookUrl leaves URL checks to validation', async (t) => {
  const out = withWebhookUrl(findTemplate()!.config, 'http://localhost:3000/api/agent')
  t.strictSame(errorsOf(out), ['plugins[2].options.url must use https'])
  t.strictSame(errorsOf(out, { allowInsecureLoopback: true }), [])
})

t.test('withAvailableVendors swaps tts.vendor_a for tts.local without a key', async (t) => {
  const base = findTemplate('voice-agent-webhook')!.config
  t.strictSame(withAvailableVendors(base, ALL), base, 'unchanged when every vendor is available')
  const out = withAvailableVendors(base, { ...ALL, tts: { vendor_a: false } })
  t.strictSame(out.plugins[3], { use: 'tts.local', options: { voice: 'en-us', rate: 175 } })
  t.strictSame(out.plugins.slice(0, 3), base.plugins.slice(0, 3))
  t.strictSame(validOf(out), out)
  t.equal(base.plugins[3]?.use, 'tts.vendor_a', 'input untouched')
})

t.test('withAvailableVendors swaps STT vendors when only the other one has a key', async (t) => {
  const nova = validOf({
    clients: {},
    plugins: [{ use: 'stt.vendor_a', options: { language: 'de', keyterms: ['voxgate'] } }, { use: 'turn_manager' }, { use: 'agent.llm' }],
  })
  const toB = withAvailableVendors(nova, { stt: { vendor_a: false, vendor_b: true }, tts: { vendor_a: true } })
  t.strictSame(toB.plugins[0], {
    use: 'stt.vendor_b',
    options: {
      speech_model: 'universal-streaming-multilingual',
      word_boost: ['voxgate'],
      end_of_turn_confidence_threshold: 0.4,
      min_end_of_turn_silence_when_confident: 400,
      max_turn_silence: 1280,
    },
  })
  const back = withAvailableVendors(
    validOf({ clients: {}, plugins: [{ use: 'stt.vendor_b' }, { use: 'turn_manager' }, { use: 'agent.llm' }] }),
    { stt: { vendor_a: true, vendor_b: false }, tts: { vendor_a: true } },
  )
  t.strictSame(back.plugins[0], {
    use: 'stt.vendor_a',
    options: { model_id: 'nova-3', language: 'en', endpointing_ms: 300, utterance_end_ms: 1000 },
  })
  t.strictSame(withAvailableVendors(nova, NONE).plugins[0], nova.plugins[0], 'kept when no STT vendor has a key')
})

t.test('every template becomes valid on a machine with no vendor keys', async (t) => {
  for (const template of TEMPLATES) {
    const out = withAvailableVendors(template.config, NONE)
    t.strictSame(errorsOf(out), [], template.id)
    t.notOk(
      out.plugins.some((p) => p.use === 'tts.vendor_a'),
      `${template.id} speaks locally`,
    )
  }
})

t.test('withAvailableVendors: with no cloud recognizer but a server of your own, the agent uses that server', async (t) => {
  const own = { stt: { vendor_a: false, vendor_b: false, openai_compatible: true }, tts: { vendor_a: false, openai_compatible: true } }
  const nova = validOf({
    clients: {},
    plugins: [
      { use: 'stt.vendor_a', options: { language: 'en-US', keyterms: ['voxgate'] } },
      { use: 'turn_manager' },
      { use: 'agent.llm' },
      { use: 'tts.vendor_a' },
    ],
  })
  const out = withAvailableVendors(nova, own)
  t.match(out.plugins[0], { use: 'stt.openai_compatible', options: { mode: 'segments', language: 'en', vocabulary: ['voxgate'] } })
  t.match(out.plugins[3], { use: 'tts.openai_compatible', options: { model: 'tts-1', response_format: 'pcm' } })
  t.strictSame(errorsOf(out), [])
  const multi = withAvailableVendors(
    validOf({ clients: {}, plugins: [{ use: 'stt.vendor_a' }, { use: 'turn_manager' }, { use: 'agent.llm' }] }),
    own,
  )
  t.equal(
    (multi.plugins[0]?.options as { language?: string } | undefined)?.language,
    undefined,
    '"multi" leaves the language to the server',
  )
  const cloud = { ...own, stt: { ...own.stt, vendor_b: true } }
  t.equal(withAvailableVendors(nova, cloud).plugins[0]?.use, 'stt.vendor_b', 'a cloud key set on purpose still wins')
  for (const template of TEMPLATES) t.strictSame(errorsOf(withAvailableVendors(template.config, own)), [], template.id)
  // The first start's demo agent is the default template rewritten this way (server/bootstrap.ts).
  const demo = withAvailableVendors(findTemplate(DEFAULT_TEMPLATE_ID)!.config, own)
  t.strictSame(
    demo.plugins.map((p) => p.use).filter((u) => /^(stt|tts)\./.test(u)),
    ['stt.openai_compatible', 'tts.openai_compatible'],
    'the demo agent hears and speaks through the servers of your own',
  )
})
