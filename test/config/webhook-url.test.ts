import t from 'tap'
import { isLoopbackHost } from '../../pipeline/options/webhook-url.js'
import { baseConfig, configWithPlugin, errorsOf } from './fixtures/config-fixtures.js'

const session = (url: unknown) => ({ ...baseConfig(), session_webhook: { url } })
const agent = (url: unknown) => configWithPlugin('agent.webhook', { url })
const LOOPBACK = { allowInsecureLoopback: true }

t.test('https is required', async (t) => {
  t.strictSame(errorsOf(session('https://hooks.example.com/voice?x=1')), [])
  t.strictSame(errorsOf(agent('https://api.example.com:8443/agent')), [])
  t.strictSame(errorsOf(session('http://hooks.example.com/')), ['session_webhook.url must use https'])
  t.strictSame(errorsOf(agent('http://api.example.com/agent')), ['plugins[2].options.url must use https'])
  t.strictSame(errorsOf(agent('ftp://api.example.com/agent')), ['plugins[2].options.url must use https'])
  t.strictSame(errorsOf(agent('wss://api.example.com/agent')), ['plugins[2].options.url must use https'])
})

t.test('url shape', async (t) => {
  t.strictSame(errorsOf(session({ href: 'https://a' })), ['session_webhook.url must be a string'])
  t.strictSame(errorsOf({ ...baseConfig(), session_webhook: {} }), ['session_webhook.url is required'])
  t.strictSame(errorsOf(configWithPlugin('agent.webhook')), ['plugins[2].options.url is required'])
  t.strictSame(errorsOf(agent('/api/agent')), ['plugins[2].options.url must be a valid absolute URL'])
  t.strictSame(errorsOf(agent('')), ['plugins[2].options.url must be a valid absolute URL'])
  t.strictSame(errorsOf(agent('https://user:pw@api.example.com/')), ['plugins[2].options.url must not contain credentials'])
  t.strictSame(errorsOf(agent(`https://a.example.com/${'x'.repeat(2048)}`)), ['plugins[2].options.url must be at most 2048 characters'])
})

t.test('plain http is refused for loopback hosts unless allowed', async (t) => {
  t.strictSame(errorsOf(agent('http://127.0.0.1:3000/api/agent')), ['plugins[2].options.url must use https'])
  t.strictSame(errorsOf(session('http://localhost:3000/hooks')), ['session_webhook.url must use https'])
})

t.test('allowInsecureLoopback accepts http to loopback hosts only', async (t) => {
  for (const url of [
    'http://127.0.0.1:3000/api/agent',
    'http://127.255.0.9/x',
    'http://localhost:3000/api/agent',
    'http://LOCALHOST/x',
    'http://[::1]:8080/x',
  ]) {
    t.strictSame(errorsOf(agent(url), LOOPBACK), [], `agent webhook ${url}`)
    t.strictSame(errorsOf(session(url), LOOPBACK), [], `session webhook ${url}`)
  }
  const refused = 'must use https (plain http is accepted only for loopback hosts)'
  for (const url of [
    'http://example.com/x',
    'http://128.0.0.1/x',
    'http://10.0.0.1/x',
    'http://localhost.example.com/x',
    'http://127.0.0.1.nip.io/x',
    'http://[::2]/x',
  ]) {
    t.strictSame(errorsOf(agent(url), LOOPBACK), [`plugins[2].options.url ${refused}`], `agent webhook ${url}`)
    t.strictSame(errorsOf(session(url), LOOPBACK), [`session_webhook.url ${refused}`], `session webhook ${url}`)
  }
  t.strictSame(errorsOf(agent('https://example.com/x'), LOOPBACK), [], 'https still fine')
})

t.test('isLoopbackHost', async (t) => {
  t.ok(isLoopbackHost(new URL('http://127.1/').hostname), 'short IPv4 form normalised by URL')
  t.ok(isLoopbackHost('localhost.'))
  t.notOk(isLoopbackHost('0.0.0.0'))
  t.notOk(isLoopbackHost('[::ffff:7f00:1]'), 'IPv4-mapped IPv6 is not treated as loopback')
})

t.test("the gateway's own tunnel addresses are accepted whatever the scheme", async (t) => {
  const policy = { trustedPrefixes: ['http://localhost:8080/tunnel/'] }
  t.strictSame(errorsOf(agent('http://localhost:8080/tunnel/tun_1/api/agent'), policy), [], 'without ALLOW_INSECURE_WEBHOOKS')
  t.strictSame(errorsOf(agent('http://LOCALHOST:8080/tunnel/tun_1/api/agent'), policy), [], 'as URL normalises it')
  t.strictSame(
    errorsOf(agent('http://localhost:8080/v1/agents'), policy),
    ['plugins[2].options.url must use https'],
    'another path of the gateway is not a tunnel',
  )
  t.strictSame(errorsOf(agent('http://localhost:8081/tunnel/tun_1/x'), policy), ['plugins[2].options.url must use https'], 'another port')
  t.strictSame(errorsOf(agent('http://u:p@localhost:8080/tunnel/tun_1/x'), policy), ['plugins[2].options.url must not contain credentials'])
  const gateway = { trustedPrefixes: ['http://gw.internal:8080/tunnel/'] }
  t.strictSame(errorsOf(session('http://gw.internal:8080/tunnel/tun_2/hooks'), gateway), [], 'a non-loopback plain-http PUBLIC_URL too')
})

t.test('a refusal that ALLOW_INSECURE_WEBHOOKS would lift says so', async (t) => {
  const hint = 'plain http to a loopback host is accepted when the gateway runs with ALLOW_INSECURE_WEBHOOKS=true'
  const policy = { insecureHint: hint }
  t.strictSame(errorsOf(agent('http://127.0.0.1:3000/api/agent'), policy), [`plugins[2].options.url must use https (${hint})`])
  t.strictSame(errorsOf(agent('http://example.com/api/agent'), policy), ['plugins[2].options.url must use https'], 'it would not help')
})
