/**
 * The egress rules through the API, as an organization meets them: every spelling of a private address is refused
 * when an agent is created or updated (400, the SPEC's error body naming the field); ALLOW_INSECURE_WEBHOOKS lets
 * loopback through and nothing else; EGRESS_ALLOW_CIDRS (or its former name, with a warning) lets a range through.
 */
import t from 'tap'
import { Writable } from 'node:stream'
import { createLogger } from '../../core/log.js'
import { startTestGateway, type TestGateway } from '../helpers/gateway.js'

const LOOPBACK = ['127.0.0.1', '2130706433', '0x7f000001', '0177.0.0.1', '127.1', '[::1]', '[::ffff:127.0.0.1]', 'localhost']
const PRIVATE = ['10.0.0.1', '172.16.0.1', '192.168.0.1', '100.64.0.1', '[fc00::1]', '[::ffff:10.0.0.1]', '[64:ff9b::a00:1]']

async function webhookAt(gw: TestGateway, url: string) {
  const agent = (await gw.request('POST', '/v1/agents', { body: { template_id: 'voice-agent-webhook' } })).body
  return gw.request('POST', `/v1/agents/${agent.id}`, { body: { webhook_url: url } })
}

t.test('by default: every spelling of loopback and every private range refused, naming the field', async (t) => {
  const gw = await startTestGateway({ ALLOW_INSECURE_WEBHOOKS: '0' })
  t.teardown(() => gw.close())
  for (const host of [...LOOPBACK, ...PRIVATE]) {
    const r = await webhookAt(gw, `https://${host}:8443/agent`)
    t.equal(r.status, 400, host)
    t.match(r.body, { code: 'validation_failed', error: String, details: [/plugins\[\d+\]\.options\.url: .* is /] }, host)
  }
  // Agent creation with a whole configuration is checked the same way.
  const template = (await gw.request('POST', '/v1/agents', { body: { template_id: 'voice-agent-webhook' } })).body
  const config = structuredClone(template.config)
  config.session_webhook = { url: 'https://0x7f000001/hooks' }
  const created = await gw.request('POST', `/v1/agents/${template.id}`, { body: { config } })
  t.match(created, { status: 400, body: { code: 'validation_failed', details: [/session_webhook\.url: 127\.0\.0\.1 is loopback/] } })
  t.equal((await webhookAt(gw, 'https://backend.example.com/agent')).status, 200, 'a public name is fine')
})

t.test('ALLOW_INSECURE_WEBHOOKS: loopback accepted, the private ranges still refused', async (t) => {
  const gw = await startTestGateway({ ALLOW_INSECURE_WEBHOOKS: '1' })
  t.teardown(() => gw.close())
  for (const host of LOOPBACK) t.equal((await webhookAt(gw, `https://${host}:8443/agent`)).status, 200, host)
  for (const host of PRIVATE) t.equal((await webhookAt(gw, `https://${host}:8443/agent`)).status, 400, host)
  const own = await webhookAt(gw, `${gw.url}/v1/agents`)
  t.match(own, { status: 400, body: { error: /the gateway itself/ } }, 'the gateway itself, still')
})

t.test('EGRESS_ALLOW_CIDRS lets a range through; the former name too, with a warning at start-up', async (t) => {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  const gw = await startTestGateway({ ALLOW_INSECURE_WEBHOOKS: '0', EGRESS_ALLOW_CIDRS: '10.0.0.0/8' })
  t.teardown(() => gw.close())
  t.equal((await webhookAt(gw, 'https://10.0.0.1/agent')).status, 200)
  t.equal((await webhookAt(gw, 'https://[::ffff:10.0.0.1]/agent')).status, 200, 'mapped: the same address')
  t.equal((await webhookAt(gw, 'https://192.168.0.1/agent')).status, 400, 'another range')

  const old = await startTestGateway(
    { ALLOW_INSECURE_WEBHOOKS: '0', WEBHOOK_ALLOW_CIDRS: '10.0.0.0/8' },
    { log: createLogger('info', {}, sink) },
  )
  t.teardown(() => old.close())
  t.equal((await webhookAt(old, 'https://10.0.0.1/agent')).status, 200)
  t.match(lines.join(''), /"level":40.*WEBHOOK_ALLOW_CIDRS is deprecated: rename it EGRESS_ALLOW_CIDRS/)
})
