import t from 'tap'
import { configWithPlugin, errorsOf, validOf } from './fixtures/config-fixtures.js'

const URL = 'https://api.example.com/agent'
const webhook = (options: Record<string, unknown>) => configWithPlugin('agent.webhook', { url: URL, ...options })
const errors = (options: Record<string, unknown>) => errorsOf(webhook(options))
const P = 'plugins[2].options'

t.test('reply_timeout_ms: an integer from 1000 to 60000, default 2500 (a never-answering backend is heard by 3.5 s)', async (t) => {
  t.strictSame(errors({ reply_timeout_ms: 1000 }), [])
  t.strictSame(errors({ reply_timeout_ms: 60000 }), [])
  t.strictSame(errors({ reply_timeout_ms: 999 }), [`${P}.reply_timeout_ms must be between 1000 and 60000`])
  t.strictSame(errors({ reply_timeout_ms: 60001 }), [`${P}.reply_timeout_ms must be between 1000 and 60000`])
  t.strictSame(errors({ reply_timeout_ms: 1500.5 }), [`${P}.reply_timeout_ms must be an integer`])
  t.strictSame(errors({ reply_timeout_ms: '3000' }), [`${P}.reply_timeout_ms must be a number`])
  const options = validOf(webhook({})).plugins[2]?.options as Record<string, unknown>
  t.equal(options.reply_timeout_ms, 2500)
})

t.test('fallback messages: 1 to 10 non-empty phrases of at most 300 characters', async (t) => {
  t.strictSame(errors({ fallback: { messages: ['Sorry?', 'Pardon?'] } }), [])
  t.strictSame(errors({ fallback: { messages: [] } }), [`${P}.fallback.messages must not be empty`])
  t.strictSame(errors({ fallback: { messages: Array(11).fill('Sorry') } }), [`${P}.fallback.messages must contain at most 10 items`])
  t.strictSame(errors({ fallback: { messages: [''] } }), [`${P}.fallback.messages[0] must not be empty`])
  t.strictSame(errors({ fallback: { messages: ['x'.repeat(301)] } }), [`${P}.fallback.messages[0] must be at most 300 characters`])
  t.strictSame(errors({ fallback: { messages: 'Sorry' } }), [`${P}.fallback.messages must be an array`])
})

t.test('after N consecutive failures: continue, transfer (needs transfer_to) or hang up', async (t) => {
  t.strictSame(errors({ fallback: { max_consecutive_failures: 1, on_max_failures: 'hangup' } }), [])
  t.strictSame(errors({ fallback: { max_consecutive_failures: 20 } }), [])
  t.strictSame(errors({ fallback: { max_consecutive_failures: 0 } }), [`${P}.fallback.max_consecutive_failures must be between 1 and 20`])
  t.strictSame(errors({ fallback: { max_consecutive_failures: 21 } }), [`${P}.fallback.max_consecutive_failures must be between 1 and 20`])
  t.strictSame(errors({ fallback: { on_max_failures: 'retry' } }), [
    `${P}.fallback.on_max_failures must be one of continue, transfer, hangup`,
  ])
  t.strictSame(errors({ fallback: { on_max_failures: 'transfer' } }), [
    `${P}.fallback.transfer_to is required when on_max_failures is "transfer"`,
  ])
  t.strictSame(errors({ fallback: { on_max_failures: 'transfer', transfer_to: '+14155550100' } }), [])
  t.strictSame(errors({ fallback: { on_max_failures: 'transfer', transfer_to: 'sip:desk@pbx.example.com' } }), [])
  t.strictSame(errors({ fallback: { on_max_failures: 'transfer', transfer_to: '555-0100' } }), [
    `${P}.fallback.transfer_to must be an E.164 phone number (+14155550100) or a sip: URI`,
  ])
  t.strictSame(errors({ fallback: { farewell_message: '' } }), [`${P}.fallback.farewell_message must not be empty`])
})

t.test('holding phrase: off by default, after 300 to 10000 ms', async (t) => {
  const options = validOf(webhook({})).plugins[2]?.options as { holding: { enabled: boolean } }
  t.equal(options.holding.enabled, false)
  t.strictSame(errors({ holding: { enabled: true, after_ms: 300 } }), [])
  t.strictSame(errors({ holding: { enabled: true, after_ms: 10000 } }), [])
  t.strictSame(errors({ holding: { after_ms: 299 } }), [`${P}.holding.after_ms must be between 300 and 10000`])
  t.strictSame(errors({ holding: { enabled: 'yes' } }), [`${P}.holding.enabled must be a boolean`])
})

t.test('unknown keys are refused with a hint', async (t) => {
  t.strictSame(errors({ fallback: { mesages: ['x'] } }), [`${P}.fallback.mesages is not a known field (did you mean messages?)`])
  t.strictSame(errors({ holding: { after: 500 } }), [`${P}.holding.after is not a known field (did you mean after_ms?)`])
  t.strictSame(errors({ reply_timeout: 3000 }), [`${P}.reply_timeout is not a known field (did you mean reply_timeout_ms?)`])
})
