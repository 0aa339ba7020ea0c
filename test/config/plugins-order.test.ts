import t from 'tap'
import { errorsOf } from './fixtures/config-fixtures.js'

const ORDER = 'plugins must be in the order stt.*, turn_manager, agent.*, tts.*'
const config = (...uses: string[]) => ({ clients: {}, plugins: uses.map((use) => ({ use })) })

t.test('valid orders', async (t) => {
  t.strictSame(errorsOf(config('stt.vendor_a', 'turn_manager', 'agent.llm', 'tts.local')), [])
  t.strictSame(errorsOf(config('stt.vendor_b', 'turn_manager', 'agent.llm', 'tts.vendor_a')), [])
  t.strictSame(errorsOf(config('turn_manager', 'agent.llm', 'tts.local')), [], 'stt is optional (typed text only)')
  t.strictSame(errorsOf(config('stt.vendor_a', 'turn_manager', 'agent.llm')), [], 'tts is optional (text replies)')
  t.strictSame(errorsOf(config('turn_manager', 'agent.llm')), [])
})

t.test('wrong order', async (t) => {
  t.strictSame(errorsOf(config('turn_manager', 'stt.vendor_a', 'agent.llm')), [ORDER])
  t.strictSame(errorsOf(config('stt.vendor_a', 'agent.llm', 'turn_manager', 'tts.local')), [ORDER])
  t.strictSame(errorsOf(config('tts.local', 'turn_manager', 'agent.llm')), [ORDER])
})

t.test('multiplicity', async (t) => {
  t.strictSame(errorsOf(config('stt.vendor_a', 'stt.vendor_b', 'turn_manager', 'agent.llm')), [
    'plugins must contain at most one stt.* plugin',
  ])
  t.strictSame(errorsOf(config('stt.vendor_a', 'agent.llm')), ['plugins must contain exactly one turn_manager plugin'])
  t.strictSame(errorsOf(config('turn_manager', 'turn_manager', 'agent.llm')), ['plugins must contain exactly one turn_manager plugin'])
  t.strictSame(errorsOf(config('turn_manager')), ['plugins must contain exactly one agent.* plugin'])
  const twoAgents = config('turn_manager', 'agent.llm')
  twoAgents.plugins.push({ use: 'agent.webhook', options: { url: 'https://a.example.com/' } } as never)
  t.strictSame(errorsOf(twoAgents), ['plugins must contain exactly one agent.* plugin'])
  t.strictSame(errorsOf(config('turn_manager', 'agent.llm', 'tts.local', 'tts.vendor_a')), [
    'plugins must contain at most one tts.* plugin',
  ])
  t.strictSame(errorsOf(config()), [
    'plugins must contain exactly one turn_manager plugin',
    'plugins must contain exactly one agent.* plugin',
  ])
})

t.test('unknown plugin names the index', async (t) => {
  t.strictSame(errorsOf(config('stt.vendor_c', 'turn_manager', 'agent.llm')), [
    'plugins[0].use must be one of stt.vendor_a, stt.vendor_b, stt.openai_compatible, turn_manager, agent.llm, agent.webhook, tts.vendor_a, tts.openai_compatible, tts.local',
  ])
  t.strictSame(errorsOf({ clients: {}, plugins: [{ use: 'turn_manager' }, { options: {} }, { use: 'agent.llm' }] }), [
    'plugins[1].use must be one of stt.vendor_a, stt.vendor_b, stt.openai_compatible, turn_manager, agent.llm, agent.webhook, tts.vendor_a, tts.openai_compatible, tts.local',
  ])
})

t.test('plugin entries and options must be objects', async (t) => {
  t.strictSame(errorsOf({ clients: {}, plugins: 'turn_manager' }), ['plugins must be an array'])
  t.strictSame(errorsOf({ clients: {}, plugins: [{ use: 'turn_manager', options: null }, { use: 'agent.llm' }] }), [
    'plugins[0].options must be an object',
  ])
})

t.test('telephony needs speech in and out and no push-to-talk', async (t) => {
  const phone = (...plugins: unknown[]) => ({ clients: { carrier: true }, plugins })
  t.strictSame(errorsOf(phone({ use: 'turn_manager' }, { use: 'agent.llm' })), [
    'plugins must include an stt.* plugin when clients.carrier is enabled',
    'plugins must include a tts.* plugin when clients.carrier is enabled',
  ])
  t.strictSame(
    errorsOf(
      phone(
        { use: 'stt.vendor_a' },
        { use: 'turn_manager', options: { trigger: 'push_to_talk' } },
        { use: 'agent.llm' },
        { use: 'tts.local' },
      ),
    ),
    ['plugins[1].options.trigger cannot be push_to_talk when clients.carrier is enabled'],
  )
  t.strictSame(
    errorsOf({
      clients: {},
      plugins: [{ use: 'turn_manager', options: { trigger: 'push_to_talk' } }, { use: 'agent.llm' }],
    }),
    [],
    'browsers may use push-to-talk',
  )
})
