import t from 'tap'
import { eventually } from '../helpers/eventually.js'
import { startVoiceHarness, speak, silence } from '../helpers/voice-harness.js'
import { SessionManager } from '../../gateway/sessions/session-manager.js'
import { MemoryTransport } from '../helpers/memory-transport.js'
import { silentLogger } from '../../core/log.js'
import type { PipelineEvent } from '../../pipeline/index.js'

// Session details while the call is live report the figures so far: a real call through the speech-vendor fakes
// and the backend fake, the details read over real HTTP before the call ends.
const h = await startVoiceHarness()
t.teardown(() => h.close())

function sse(turnId: string, text: string) {
  return {
    kind: 'sse' as const,
    steps: [{ data: { type: 'response.tts', content: text, turn_id: turnId } }, { data: { type: 'response.end', turn_id: turnId } }],
  }
}

const assistantTurnEnd = (turnId?: string) => (e: PipelineEvent) =>
  e.type === 'turn.end' && e.role === 'assistant' && (turnId === undefined || e.turnId === turnId)

t.test('a session live on this process reports duration, speech seconds and latency so far', async (t) => {
  h.backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello, how can I help?' : 'It is on its way.')
  const first = h.backend.requests.length
  h.transcripts.push('where is my parcel')
  const { session, transport } = await h.open()
  await transport.waitFor(assistantTurnEnd())
  await silence(session, 300)
  await speak(session, 'two-phrases.wav')
  await silence(session, 1500)
  const message = await h.backend.request(first + 1)
  t.equal(message.json.type, 'message')
  await transport.waitFor(assistantTurnEnd(message.json.turn_id))
  await new Promise((r) => setTimeout(r, 100))

  const live = await h.gw.request('GET', `/v1/agents/${h.agent.id}/sessions/${session.id}`)
  t.equal(live.status, 200)
  t.equal(live.body.status, 'connected')
  t.equal(live.body.ended_at, null)
  t.type(live.body.duration_ms, 'number', 'duration so far')
  const sinceStart = Date.now() - Date.parse(live.body.started_at)
  t.ok(live.body.duration_ms > 0 && live.body.duration_ms <= sinceStart + 50, `duration ${live.body.duration_ms} ms of ~${sinceStart} ms`)
  t.ok(live.body.transcription_duration_seconds > 0, `transcription seconds so far: ${live.body.transcription_duration_seconds}`)
  t.ok(live.body.tts_duration_seconds > 0, `tts seconds so far: ${live.body.tts_duration_seconds}`)
  t.type(live.body.latency_ms, 'number', 'mean turn latency so far')
  t.same(live.body.metadata, {}, 'metadata is an object when none was given')

  await session.end('hangup')
  const ended = await h.gw.request('GET', `/v1/agents/${h.agent.id}/sessions/${session.id}`)
  t.equal(ended.body.status, 'ended')
  t.ok(ended.body.duration_ms >= live.body.duration_ms)
  t.ok(ended.body.tts_duration_seconds >= live.body.tts_duration_seconds)
  t.ok(ended.body.transcription_duration_seconds >= live.body.transcription_duration_seconds)
  t.same(ended.body.metadata, {})
  const turnEnds = ended.body.transcript.map((e: { user_message: string | null; turn_end: string | null }) => [e.user_message, e.turn_end])
  t.same(
    turnEnds,
    [
      [null, null],
      ['where is my parcel', 'vendor_end_of_turn'],
    ],
    'each stored turn says why the caller turn ended: the welcome had none, the vendor ended the question',
  )
})

t.test('a session live on another process reports what its row has, duration counted to now', async (t) => {
  // PGlite is single-process: a second session manager on the same database stands in for the other process.
  const other = new SessionManager(
    { db: h.gw.store.db, log: silentLogger(), webhookPolicy: { allowInsecureLoopback: true }, usageRatePerMinute: 0 },
    30_000,
  )
  t.teardown(() => other.shutdown(0))
  h.backend.reply = () => ({ kind: 'status', status: 204 })
  const auth = await h.gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: h.agent.id } })
  const r = await other.open(auth.body.client_session_key, new MemoryTransport(), { ipAddress: null, countryCode: null })
  t.ok(r.ok, 'the other process holds the session')
  if (!r.ok) return
  t.notOk(h.gw.gateway.sessions.live.has(r.session.id), 'not live on the process that answers')
  await r.session.addTurn({ turnId: 'assistant-1', timestamp: new Date(), userMessage: 'hi', assistantMessage: 'hello', latencyMs: 120 })
  await r.session.addTurn({ turnId: 'assistant-2', timestamp: new Date(), userMessage: 'bye', assistantMessage: 'bye', latencyMs: 80 })
  // The turns are written in order behind the session (on the server, the second came later than a fixed 50 ms once):
  // the details are read once both are stored, and at least 50 ms after the start.
  await new Promise((r) => setTimeout(r, 50))
  const live = await eventually(
    async () => {
      const d = await h.gw.request('GET', `/v1/agents/${h.agent.id}/sessions/${r.session.id}`)
      return d.body.transcript?.length === 2 ? d : undefined
    },
    5_000,
    'both turns stored',
  )
  t.equal(live.body.status, 'connected')
  t.type(live.body.duration_ms, 'number', 'duration from started_at to now')
  t.ok(live.body.duration_ms >= 50, `duration ${live.body.duration_ms} ms`)
  t.equal(live.body.latency_ms, 100, 'mean latency of the turns stored so far')
  t.equal(live.body.transcription_duration_seconds, null, 'speech seconds are known only to the owning process until the end')
  t.equal(live.body.tts_duration_seconds, null)
  t.same(live.body.metadata, {})
  await r.session.end('hangup')
})
