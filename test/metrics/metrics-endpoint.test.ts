import t from 'tap'
import { once } from 'node:events'
import WebSocket from 'ws'
import { startTestGateway } from '../helpers/gateway.js'
import { PrometheusMetrics } from '../../server/prometheus-metrics.js'
import { withCarrierMetrics } from '../../server/carrier-metrics.js'
import { CarrierApiError, type Carrier } from '../../carrier/carrier.js'
import { parseScrape } from './prom-text.js'
import { startWebhookReceiver } from '../helpers/webhook-receiver.js'
import { WebhookQueue, deliveryOutcome } from '../../gateway/webhooks/webhook-queue.js'
import { silentLogger } from '../../core/log.js'

const TOKEN = 'metrics-token-for-tests'
const gw = await startTestGateway({ METRICS_TOKEN: TOKEN })
t.teardown(() => gw.close())

async function scrape(authorization?: string) {
  return fetch(`${gw.url}/metrics`, authorization === undefined ? {} : { headers: { authorization } })
}

t.test('METRICS_TOKEN guards /metrics: missing or wrong bearer gets 401 with the error body', async (t) => {
  for (const auth of [undefined, 'Bearer wrong-token', TOKEN]) {
    const r = await scrape(auth)
    t.equal(r.status, 401, `refused: ${auth ?? 'no header'}`)
    t.match(await r.json(), { error: /metrics token/, code: 'metrics_unauthorized' })
  }
  t.equal(gw.gateway.tracing, false, 'no traces without OTEL_EXPORTER_OTLP_ENDPOINT')
  const ok = await scrape(`Bearer ${TOKEN}`)
  t.equal(ok.status, 200)
  t.match(ok.headers.get('content-type'), /^text\/plain; version=0\.0\.4/)
  const s = parseScrape(await ok.text())
  t.equal(s.value('voxgate_live_sessions', { channel: 'carrier' }), 0, 'live sessions reported per channel, 0 when none')
  t.ok(s.names.has('nodejs_eventloop_lag_seconds'), 'event loop delay (default metrics)')
  t.ok(s.names.has('nodejs_gc_duration_seconds'), 'GC (default metrics)')
})

t.test('a refused browser session key is counted by reason', async (t) => {
  const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/v1/agents/web/websocket?client_session_key=csk_unknown`)
  const [, res] = (await once(ws, 'unexpected-response')) as [unknown, { statusCode: number }]
  t.equal(res.statusCode, 401)
  // Ending a socket that never opened emits an error; it is the expected end here.
  ws.on('error', () => undefined)
  ws.terminate()
  const s = parseScrape(await (await scrape(`Bearer ${TOKEN}`)).text())
  t.equal(s.value('voxgate_session_refusals_total', { channel: 'browser', reason: 'unknown' }), 1)
})

t.test('a browser session refused at authorize_session (balance used up) is counted by reason', async (t) => {
  const org = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'broke' } })
  await gw.request('PATCH', `/admin/v1/organizations/${org.body.id}`, { admin: true, body: { balance: 0 } })
  const agent = await gw.request('POST', '/v1/agents', { key: org.body.api_key, body: {} })
  const before = parseScrape(await (await scrape(`Bearer ${TOKEN}`)).text())
  const refusedBefore = before.value('voxgate_session_refusals_total', { channel: 'browser', reason: 'insufficient_balance' }) ?? 0
  const r = await gw.request('POST', '/v1/agents/web/authorize_session', { key: org.body.api_key, body: { agent_id: agent.body.id } })
  t.equal(r.status, 402)
  const s = parseScrape(await (await scrape(`Bearer ${TOKEN}`)).text())
  t.equal(s.value('voxgate_session_refusals_total', { channel: 'browser', reason: 'insufficient_balance' }), refusedBefore + 1)
})

t.test("carrier REST failures are counted by operation and code; the carrier's other members pass through", async (t) => {
  const metrics = new PrometheusMetrics(() => [])
  const fail = new CarrierApiError({ code: 'carrier_rate_limited', status: 429, message: 'slow down' })
  const carrier = {
    name: 'fake',
    callsClient: () => ({
      createCall: async () => {
        throw fail
      },
      hangup: async (sid: string) => ({ sid, status: 'completed' }),
    }),
  } as unknown as Carrier
  const counted = withCarrierMetrics(carrier, metrics)
  t.equal((counted as unknown as { name: string }).name, 'fake')
  const client = counted.callsClient({ accountSid: 'AC1', authToken: 'x' } as never)
  await t.rejects(client.createCall({} as never), fail, 'the error is rethrown as is')
  t.same(await client.hangup('CA1'), { sid: 'CA1', status: 'completed' })
  const s = parseScrape(await metrics.render())
  t.equal(s.value('voxgate_carrier_api_errors_total', { operation: 'create_call', code: 'carrier_rate_limited' }), 1)
  t.equal(s.value('voxgate_carrier_api_errors_total', { operation: 'hangup' }), undefined, 'a success counts nothing')
})

t.test('lifecycle webhook deliveries are counted by final outcome, after retries', async (t) => {
  const receiver = await startWebhookReceiver()
  t.teardown(() => receiver.close())
  receiver.respond = (req, res) => {
    res.writeHead(req.json.type === 'session.end' ? 500 : 200).end()
  }
  const metrics = new PrometheusMetrics(() => [])
  const queue = new WebhookQueue({ url: receiver.url, secret: 'whsec_test' }, silentLogger(), {
    policy: { allowInsecureLoopback: true },
    maxAttempts: 2,
    backoffMs: [1],
    onResult: (r) => metrics.webhookDelivery('lifecycle', deliveryOutcome(r)),
  })
  queue.send({ type: 'session.start' })
  queue.send({ type: 'session.end' })
  await queue.drain(10_000)
  const s = parseScrape(await metrics.render())
  t.equal(s.value('voxgate_webhook_deliveries_total', { kind: 'lifecycle', outcome: 'delivered' }), 1)
  t.equal(s.value('voxgate_webhook_deliveries_total', { kind: 'lifecycle', outcome: 'failed' }), 1, 'two attempts, one failure counted')
  t.equal(receiver.requests.length, 3)
})
