import t from 'tap'
import { baseConfig, configWithPlugin, errorsOf } from './fixtures/config-fixtures.js'

t.test('required root fields and root type', async (t) => {
  t.strictSame(errorsOf({}), ['clients is required', 'plugins is required'])
  t.strictSame(errorsOf(null), ['config must be an object'])
  t.strictSame(errorsOf([]), ['config must be an object'])
  t.strictSame(errorsOf({ ...baseConfig(), clients: true }), ['clients must be an object'])
  t.strictSame(errorsOf({ ...baseConfig(), type: 'chat' }), ['type must be voice'])
  t.strictSame(errorsOf({ ...baseConfig(), type: 'voice' }), [])
  t.strictSame(errorsOf({ ...baseConfig(), metadata: [] }), ['metadata must be an object'])
  t.strictSame(errorsOf({ ...baseConfig(), metadata: { team: 'a', n: 1 } }), [])
})

t.test('unknown root keys are rejected with a suggestion for typos', async (t) => {
  t.strictSame(errorsOf({ ...baseConfig(), sesion_webhook: {} }), ['sesion_webhook is not a known field (did you mean session_webhook?)'])
  t.strictSame(errorsOf({ ...baseConfig(), colour: 'blue' }), ['colour is not a known field'])
  t.strictSame(errorsOf({ ...baseConfig(), a: 1, b: 2 }), ['a is not a known field', 'b is not a known field'])
})

t.test('unknown nested keys are rejected', async (t) => {
  t.strictSame(errorsOf({ ...baseConfig(), clients: { browser: true, phone: true } }), ['clients.phone is not a known field'])
  t.strictSame(errorsOf({ ...baseConfig(), vad: { enabeld: false } }), ['vad.enabeld is not a known field (did you mean enabled?)'])
  t.strictSame(errorsOf({ ...baseConfig(), session_webhook: { url: 'https://a.example.com/', header: {} } }), [
    'session_webhook.header is not a known field',
  ])
  t.strictSame(errorsOf({ ...baseConfig(), plugins: [...baseConfig().plugins.slice(0, 3), { use: 'tts.local', opts: {} }] }), [
    'plugins[3].opts is not a known field',
  ])
})

t.test('unknown plugin options are rejected', async (t) => {
  t.strictSame(errorsOf(configWithPlugin('turn_manager', { base_timeout: 900 })), [
    'plugins[1].options.base_timeout is not a known field (did you mean base_timeout_ms?)',
  ])
  t.strictSame(errorsOf(configWithPlugin('stt.vendor_a', { model_id: 'flux', endpointing_ms: 300 })), [
    'plugins[0].options.endpointing_ms is not a known field',
  ])
  t.strictSame(errorsOf(configWithPlugin('tts.vendor_a', { voice: 'x' })), [
    'plugins[3].options.voice is not a known field (did you mean voice_id?)',
  ])
  t.strictSame(errorsOf(configWithPlugin('agent.llm', { prompt: 'x' })), ['plugins[2].options.prompt is not a known field'])
})

t.test('clients toggles', async (t) => {
  t.strictSame(errorsOf({ ...baseConfig(), clients: { browser: 'yes' } }), [
    'clients.browser must be a boolean or an object { "enabled": boolean }',
  ])
  t.strictSame(errorsOf({ ...baseConfig(), clients: { carrier: { enabled: 1 } } }), [
    'clients.carrier must be a boolean or an object { "enabled": boolean }',
  ])
  t.strictSame(errorsOf({ ...baseConfig(), clients: { carrier: { enabled: true, x: 1 } } }), ['clients.carrier.x is not a known field'])
})

t.test('list rules', async (t) => {
  const sw = (events: unknown) => errorsOf({ ...baseConfig(), session_webhook: { url: 'https://a.example.com/', events } })
  t.strictSame(sw(['session.end']), [])
  t.strictSame(sw([]), [], 'an empty list sends no lifecycle webhooks')
  t.strictSame(sw(['session.end', 'session.end']), ['session_webhook.events must not repeat "session.end"'])
  t.strictSame(sw(['session.stop']), [
    'session_webhook.events[0] must be one of session.start, session.end, session.update, transfer.started, transfer.answered, transfer.connected, transfer.failed',
  ])
  const aw = (events: unknown) => errorsOf(configWithPlugin('agent.webhook', { url: 'https://a.example.com/', events }))
  t.strictSame(aw(['message']), [])
  t.strictSame(aw(['data', 'welcome']), ['plugins[2].options.events must include "message"'])
  t.strictSame(aw(['message', 'data', 'message']), ['plugins[2].options.events must not repeat "message"'])
  t.strictSame(aw(['message', 'session.start']), ['plugins[2].options.events[1] must be one of message, data, welcome'])
  const keyterms = (value: unknown) => errorsOf(configWithPlugin('stt.vendor_a', { keyterms: value }))
  t.strictSame(keyterms(['voxgate', 'Anthropic']), [])
  t.strictSame(keyterms('voxgate'), ['plugins[0].options.keyterms must be an array'])
  t.strictSame(keyterms(['']), ['plugins[0].options.keyterms[0] must not be empty'])
  t.strictSame(keyterms(Array.from({ length: 101 }, (_, i) => `t${i}`)), ['plugins[0].options.keyterms must contain at most 100 items'])
})

t.test('custom headers', async (t) => {
  const headers = (custom_headers: unknown) =>
    errorsOf(configWithPlugin('agent.webhook', { url: 'https://a.example.com/', custom_headers }))
  t.strictSame(headers({ 'X-Api-Key': 'secret', 'x-trace': '' }), [])
  t.strictSame(headers({ 'X Api': 'v' }), ['plugins[2].options.custom_headers["X Api"] is not a valid HTTP header name'])
  t.strictSame(headers({ 'X-Ä': 'v' }), ['plugins[2].options.custom_headers["X-Ä"] is not a valid HTTP header name'])
  t.strictSame(headers({ 'X-A': 'v\r\nSet-Cookie: a=b' }), [
    'plugins[2].options.custom_headers.X-A must not contain CR, LF or NUL characters',
  ])
  t.strictSame(headers({ 'Service-Signature': 't=1,v1=00' }), [
    'plugins[2].options.custom_headers.Service-Signature is set by the gateway and cannot be overridden',
  ])
  t.strictSame(headers({ 'X-A': 1 }), ['plugins[2].options.custom_headers.X-A must be a string'])
  t.strictSame(errorsOf({ ...baseConfig(), session_webhook: { url: 'https://a.example.com/', custom_headers: { Host: 'evil' } } }), [
    'session_webhook.custom_headers.Host is set by the gateway and cannot be overridden',
  ])
})
