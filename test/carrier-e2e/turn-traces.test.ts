import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connectTwoTurnCall, eventually, newBackendTenant, speech, startVoiceWorld } from './carrier-setup.js'
import { LATENCY_STAGES } from '../../pipeline/index.js'

// An OTLP/HTTP receiver (JSON encoding, as @opentelemetry/exporter-trace-otlp-http sends it) records the spans.
type Span = { traceId: string; spanId: string; parentSpanId?: string; name: string; startTimeUnixNano: string; endTimeUnixNano: string }
const spans: Span[] = []
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    if (req.url === '/v1/traces' && req.method === 'POST') {
      const body = JSON.parse(Buffer.concat(chunks).toString())
      for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []))
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
  })
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
t.teardown(() => receiver.close())

const { c, transcripts } = await startVoiceWorld(t, {
  OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
})
const { tenant, backend } = await newBackendTenant(t, c, 'traces-token')

t.test("a call's turns arrive as spans, each with a child per latency stage", async (t) => {
  t.equal(c.gw.gateway.tracing, true, 'OTEL_EXPORTER_OTLP_ENDPOINT turns tracing on')
  const { call, row } = await connectTwoTurnCall(c, tenant, backend, transcripts)
  const messages = () => backend.requests.filter((q) => q.json?.session_id === row.id && q.json.type === 'message').length
  await eventually(async () => (backend.requests.some((q) => q.json?.type === 'session.start') ? true : undefined), 15_000)
  await call.sendAudio(speech('two-phrases.wav'))
  await eventually(async () => (messages() === 1 ? true : undefined), 15_000)
  await call.sendAudio(speech('two-phrases.wav'))
  await eventually(async () => (messages() === 2 ? true : undefined), 15_000)
  await call.hangup()
  // The batch processor exports within seconds; wait for both turns' spans to arrive.
  const turns = await eventually(async () => {
    const roots = spans.filter((s) => s.name === 'voice.turn')
    return roots.length === 2 ? roots : undefined
  }, 20_000)
  for (const root of turns) {
    t.notOk(root.parentSpanId, 'a turn span is a root')
    const children = spans.filter((s) => s.parentSpanId === root.spanId)
    t.ok(
      children.every((s) => s.traceId === root.traceId),
      'children share the turn’s trace',
    )
    t.same(children.map((s) => s.name).sort(), LATENCY_STAGES.slice(1).sort(), 'one child per stage after the origin')
    const start = BigInt(root.startTimeUnixNano)
    const end = BigInt(root.endTimeUnixNano)
    t.ok(
      children.every((s) => BigInt(s.startTimeUnixNano) >= start && BigInt(s.endTimeUnixNano) <= end),
      'stages lie within the turn',
    )
  }
})
