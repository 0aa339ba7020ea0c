/**
 * No caller is left in silence, on a browser session over the real WebSocket protocol: for each way
 * the agent's backend can fail a turn, the caller hears the fallback in time, the next turn is answered, and the
 * session details name the cause. One gateway for the whole file; each row is one session.
 */
import t from 'tap'
import { turnFailedLine } from '../../cli/tunnel/exchange-log.js'
import { silentLogger } from '../../core/log.js'
import { SessionTail } from '../../gateway/tunnels/session-tail.js'
import type { GatewayMessage } from '../../gateway/tunnels/tunnel-codec.js'
import { startFakeBackend, type FakeBackend } from '../fakes/backend/fake-backend.js'
import { closedPort, DEFAULT_FALLBACK, entryFor, FAILURE_ROWS } from '../helpers/failure-rows.js'
import { startVoiceHarness } from '../helpers/voice-harness.js'
import { type BrowserSession, openBrowserSession } from '../helpers/ws-client.js'
import { eventually } from '../helpers/eventually.js'

const h = await startVoiceHarness()
t.teardown(() => h.close())
const fileStart = new Date()

/** The harness agent pointed at `url` instead (the defaults of the fallback settings unchanged). */
async function agentAt(url: string): Promise<{ id: string; webhook_secret: string }> {
  const created = (await h.gw.request('POST', '/v1/agents', { body: { template_id: 'voice-agent-webhook' } })).body
  const config = structuredClone(h.agent.config)
  config.plugins = config.plugins.map((p: { use: string; options: Record<string, unknown> }) =>
    p.use === 'agent.webhook' ? { ...p, options: { ...p.options, url } } : p,
  )
  const r = await h.gw.request('POST', `/v1/agents/${created.id}`, { body: { config } })
  if (r.status !== 200) throw new Error(r.text)
  return created
}

const FIRST = 'where is my parcel'
const SECOND = 'and when will it arrive'

for (const row of FAILURE_ROWS) {
  t.test(`${row.name}: the fallback is heard, the next turn is answered, the cause is stored`, async (t) => {
    let agentId: string = h.agent.id
    let backend: FakeBackend = h.backend
    let port = 0
    if (row.reply === undefined) {
      port = await closedPort()
      agentId = (await agentAt(`http://127.0.0.1:${port}/agent`)).id
    } else {
      const failing = row.reply
      h.backend.reply = (req) => {
        if (req.json.type === 'session.start') return sse(req.json.turn_id, 'Hello.')
        return req.json.text === FIRST ? failing(req) : sse(req.json.turn_id, 'Answered.')
      }
    }
    const auth = await h.gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agentId } })
    t.equal(auth.status, 200)
    const b = await openBrowserSession(h.gw.url, auth.body.client_session_key)
    t.teardown(() => b.close())
    playsInstantly(b)
    // The welcome (refused too, for the refused row) is over before the caller speaks.
    await b.waitFor((m) => m.type === 'turn.end' && m.role === 'assistant')

    const sentAt = Date.now()
    b.send({ type: 'client.response.text', content: FIRST })
    const audio = await after(b.received, sentAt, (m) => m.type === 'response.audio', 10_000)
    const waited = audio.at - sentAt
    t.ok(waited <= row.boundMs, `first audio ${waited} ms after the caller's turn (at most ${row.boundMs})`)
    const text = await after(b.received, sentAt, (m) => m.type === 'response.text', 10_000)
    t.equal(text.m.content, DEFAULT_FALLBACK, 'the fallback is what the caller heard')
    t.equal(text.m.turn_id, audio.m.turn_id, 'the first audio is the fallback')
    await b.waitFor((m) => m.type === 'turn.end' && m.role === 'assistant' && m.turn_id === text.m.turn_id, 15_000)

    if (row.reply === undefined) {
      // The backend comes up where the agent points: the next turn goes to it as usual.
      backend = await startFakeBackend({ secret: 'not-checked-here', port })
      t.teardown(() => backend.close())
      backend.reply = (req) => sse(req.json.turn_id, 'Answered.')
    }
    const before = backend.requests.length
    b.send({ type: 'client.response.text', content: SECOND })
    const next = await backend.request(before, 10_000)
    t.equal(next.json.text, SECOND, 'the next turn reached the backend')
    await b.waitFor((m) => m.type === 'response.text' && m.content === 'Answered.', 10_000)
    await b.waitFor((m) => m.type === 'response.audio' && m.turn_id === next.json.turn_id, 10_000)

    const details = await eventually(async () => {
      const r = await h.gw.request('GET', `/v1/agents/${agentId}/sessions/${next.json.session_id}`)
      return entryFor(r.body, SECOND) === undefined ? undefined : r.body
    })
    const failed = entryFor(details, FIRST)
    t.match(failed?.failure, { cause: row.cause, heard: DEFAULT_FALLBACK, detail: String }, 'the cause is in the session details')
    t.equal(failed?.assistant_message, DEFAULT_FALLBACK)
    t.ok(failed?.failure?.waited_ms >= 0 && failed?.failure?.waited_ms <= row.boundMs, `waited_ms ${failed?.failure?.waited_ms}`)
    t.ok(failed?.failure?.detail.length <= 200, 'the detail is short')
    const answered = entryFor(details, SECOND)
    t.equal(answered?.failure, null, 'the next turn is a good one')
    t.equal(answered?.assistant_message, 'Answered.')
  })
}

t.test('the failures are counted by cause', async (t) => {
  const metrics = await (await fetch(`${h.gw.url}/metrics`)).text()
  for (const row of FAILURE_ROWS) {
    t.match(metrics, new RegExp(`voxgate_turn_failures_total\\{cause="${row.cause}"\\} [1-9]`), row.cause)
  }
})

/** The client plays every reply at once: replay_finished shortly after its response.end (the audio is all in by then). */
function playsInstantly(b: BrowserSession): void {
  b.ws.on('message', (d) => {
    const m = JSON.parse(d.toString())
    if (m.type !== 'response.end') return
    setTimeout(() => b.send({ type: 'trigger.response.audio.replay_finished', reason: 'completed', turn_id: m.turn_id }), 300)
  })
}

t.test('--tail: each failed turn is one line with its cause, the wait and what the caller heard', async (t) => {
  const got: Extract<GatewayMessage, { type: 'tail' }>[] = []
  const tail = new SessionTail(h.gw.store.db, h.agent.id, fileStart, (m) => m.type === 'tail' && got.push(m), silentLogger())
  tail.start()
  t.teardown(() => tail.stop())
  // The refused row used an agent of its own; every other row failed on the harness agent.
  const causes = FAILURE_ROWS.filter((r) => r.reply !== undefined).map((r) => r.cause)
  const failed = await eventually(async () => {
    const f = got.filter((m) => m.event === 'turn.failed')
    return f.length >= causes.length ? f : undefined
  }, 5_000)
  t.same(
    failed.map((m) => m.detail?.cause),
    causes,
    'one event per failed turn, in order',
  )
  const line = turnFailedLine(failed[0] as (typeof failed)[number])
  t.match(line, /^\d\d:\d\d:\d\d\.\d{3} turn\.failed sess_\S+ turn assistant-\S+ \(http_500, caller waited \d+\.\d s, heard "I'm sorry/)
  await new Promise((r) => setTimeout(r, 1_200))
  t.equal(got.filter((m) => m.event === 'turn.failed').length, causes.length, 'each is reported once')
})

function sse(turnId: string, text: string) {
  return {
    kind: 'sse' as const,
    steps: [{ data: { type: 'response.tts', content: text, turn_id: turnId } }, { data: { type: 'response.end', turn_id: turnId } }],
  }
}

/** The first message received at or after `since` that `pred` accepts (its arrival time is when it came, not when seen). */
function after(received: { at: number; m: any }[], since: number, pred: (m: any) => boolean, timeoutMs: number) {
  return eventually(async () => received.find((x) => x.at >= since && pred(x.m)), timeoutMs)
}
