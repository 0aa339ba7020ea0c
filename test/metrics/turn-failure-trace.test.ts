/**
 * A failed turn's span: the turn span carries the failure's cause and an error status, exported over
 * OTLP/HTTP to a local receiver exactly as the SDK sends it; a good turn's span has neither.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { startTurnTracing } from '../../server/otel-turn-traces.js'

type Attr = { key: string; value: { stringValue?: string } }
type Span = { name: string; attributes?: Attr[]; status?: { code?: number; message?: string } }
const spans: Span[] = []
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString())
    for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []))
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
  })
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
t.teardown(() => receiver.close())

t.test('the turn span of a failed turn names the cause and has an error status', async (t) => {
  const tracing = startTurnTracing(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}`)
  const stages = [
    { name: 'user_speech_end', at_ms: 0, duration_ms: 0 },
    { name: 'first_frame_out', at_ms: 40, duration_ms: 40 },
  ]
  const origin = new Date()
  tracing.metrics.turnLatency(40, stages, { sessionId: 'sess_1', turnId: 'failed-turn', origin, failureCause: 'http_500' })
  tracing.metrics.turnLatency(40, stages, { sessionId: 'sess_1', turnId: 'good-turn', origin })
  await tracing.shutdown()
  const roots = spans.filter((s) => s.name === 'voice.turn')
  const attr = (s: Span | undefined, key: string) => s?.attributes?.find((a) => a.key === key)?.value.stringValue
  const failed = roots.find((s) => attr(s, 'voxgate.turn_id') === 'failed-turn')
  const good = roots.find((s) => attr(s, 'voxgate.turn_id') === 'good-turn')
  t.equal(attr(failed, 'voxgate.failure_cause'), 'http_500')
  t.equal(failed?.status?.code, 2, 'STATUS_CODE_ERROR')
  t.equal(failed?.status?.message, 'http_500')
  t.equal(attr(good, 'voxgate.failure_cause'), undefined)
  t.not(good?.status?.code, 2)
})

t.test('a warm transfer is a span from its start to its bridge or failure, the human answer an event in it', async (t) => {
  spans.length = 0
  const tracing = startTurnTracing(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}`)
  const startedAt = new Date(Date.now() - 10_000)
  tracing.metrics.warmTransfer({ sessionId: 'sess_2', startedAt, outcome: 'connected', answeredAfterMs: 2_000, endedAfterMs: 5_000 })
  tracing.metrics.warmTransfer({ sessionId: 'sess_3', startedAt, outcome: 'no_answer', answeredAfterMs: undefined, endedAfterMs: 30_000 })
  await tracing.shutdown()
  type TransferSpan = Span & { startTimeUnixNano: string; endTimeUnixNano: string; events?: { name: string }[] }
  const transfers = spans.filter((s) => s.name === 'voice.warm_transfer') as TransferSpan[]
  const attr = (s: Span | undefined, key: string) => s?.attributes?.find((a) => a.key === key)?.value.stringValue
  const connected = transfers.find((s) => attr(s, 'voxgate.session_id') === 'sess_2')
  const missed = transfers.find((s) => attr(s, 'voxgate.session_id') === 'sess_3')
  t.equal(attr(connected, 'voxgate.transfer.outcome'), 'connected')
  t.not(connected?.status?.code, 2, 'a bridge is no error')
  t.same(
    connected?.events?.map((e) => e.name),
    ['human answered'],
  )
  const ms = (ns: string | undefined) => Number(BigInt(ns ?? '0') / 1_000_000n)
  t.equal(ms(connected?.endTimeUnixNano) - ms(connected?.startTimeUnixNano), 5_000, 'from the start to the bridge')
  t.equal(attr(missed, 'voxgate.transfer.outcome'), 'no_answer')
  t.equal(missed?.status?.code, 2, 'a failed transfer has an error status')
  t.equal(missed?.status?.message, 'no_answer')
})
