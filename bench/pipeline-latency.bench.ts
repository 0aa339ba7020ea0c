// The gateway's own added latency per turn, with zero-latency fakes: a real VoicePipeline, the real agent.webhook
// step against an in-process HTTP backend, and the real ElevenLabs-compatible TTS adapter against an in-process
// WebSocket fake. Three hops are timed with one clock (performance.now, same process):
//   end of turn (STT end_of_turn yielded)   -> webhook request received by the backend
//   first SSE text written by the backend  -> TTS text message received by the TTS fake
//   first TTS audio sent by the TTS fake    -> audio frame handed to the transport
// Target: p99 under 5 ms for each.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocketServer } from 'ws'
import type { BenchFn, BenchRow } from './bench-util.js'
import { VoicePipeline } from '../pipeline/index.js'
import { WebhookAgentStep } from '../pipeline/agent/webhook-agent.js'
import { createVendorATtsStream } from '../pipeline/vendors/tts/vendor-a-tts.js'
import { validatePipelineConfig } from '../pipeline/config/validate.js'
import type { SttEvent, SttStream } from '../pipeline/vendors/stt/stt-stream.js'
import type { PipelineEvent } from '../pipeline/index.js'

/** An in-memory STT stream: the benchmark decides when a turn ends. */
class ScriptedStt implements SttStream {
  closed = false
  private readonly queue: SttEvent[] = []
  private wake: (() => void) | undefined
  emit(e: SttEvent): void {
    this.queue.push(e)
    this.wake?.()
  }
  pushAudio(): void {}
  finalize(): void {}
  async close(): Promise<void> {
    this.closed = true
    this.wake?.()
  }
  async *[Symbol.asyncIterator](): AsyncIterator<SttEvent> {
    while (!this.closed) {
      const e = this.queue.shift()
      if (e) yield e
      else await new Promise<void>((r) => (this.wake = r))
    }
  }
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN
}

const TURNS = 1000

export const bench: BenchFn = async () => {
  const marks = { eot: 0, webhook: 0, sseText: 0, ttsText: 0, ttsAudio: 0, frame: 0 }
  const samples = { eotToWebhook: [] as number[], sseToTts: [] as number[], audioToFrame: [] as number[] }

  // Customer backend: answers every message at once with one sentence and response.end.
  const backend = createServer((req, res) => {
    marks.webhook = performance.now()
    let raw = ''
    req.on('data', (c: Buffer) => (raw += c))
    req.on('end', () => {
      const turnId = JSON.parse(raw).turn_id
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      marks.sseText = performance.now()
      res.write(`data: ${JSON.stringify({ type: 'response.tts', content: 'Sure.', turn_id: turnId })}\n\n`)
      res.end(`data: ${JSON.stringify({ type: 'response.end', turn_id: turnId })}\n\n`)
    })
  })
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r))
  const backendUrl = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`

  // TTS vendor: answers each text message at once with 20 ms of PCM audio, and isFinal on close_context.
  const tts = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  tts.on('connection', (ws) => {
    ws.on('message', (data) => {
      const m = JSON.parse(String(data))
      if (typeof m.text === 'string' && m.text.trim() !== '') {
        marks.ttsText = performance.now()
        marks.ttsAudio = performance.now()
        ws.send(JSON.stringify({ audio: Buffer.alloc(640).toString('base64'), isFinal: false, contextId: m.context_id }))
      }
      if (m.close_context) ws.send(JSON.stringify({ audio: null, isFinal: true, contextId: m.context_id }))
    })
  })
  await new Promise<void>((r) => tts.once('listening', r))
  const ttsUrl = `ws://127.0.0.1:${(tts.address() as AddressInfo).port}`

  const cfg = validatePipelineConfig(
    {
      clients: { browser: true, carrier: false },
      plugins: [
        { use: 'stt.vendor_a' },
        { use: 'turn_manager' },
        { use: 'agent.webhook', options: { url: `${backendUrl}/agent`, events: ['message'] } },
        { use: 'tts.vendor_a' },
      ],
      vad: { enabled: false },
    },
    { allowInsecureLoopback: true },
  )
  if (!cfg.ok) throw new Error(cfg.errors.join('; '))
  const stt = new ScriptedStt()
  const abort = new AbortController()
  let onEvent: (e: PipelineEvent) => void = () => undefined
  const pipeline = new VoicePipeline({
    config: cfg.config,
    audio: { input: 'pcm_8000', output: 'pcm_16000' },
    context: { sessionId: 'bench', conversationId: 'bench', history: [] },
    agent: new WebhookAgentStep(
      { url: `${backendUrl}/agent`, events: ['message'], custom_headers: {}, time_to_first_byte_ms: 10_000, timeout_ms: 60_000 },
      { webhookSecret: 'bench-secret' },
    ),
    stt,
    tts: createVendorATtsStream({ model_id: 'm', voice_id: 'v' }, { outputFormat: 'pcm_16000', endpoint: { url: ttsUrl, apiKey: 'k' } }),
    emit: (e) => onEvent(e),
    hooks: { turnCompleted: () => undefined, userActivity: () => undefined, usage: () => undefined },
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    signal: abort.signal,
  })
  pipeline.start()

  for (let i = 0; i < TURNS + 20; i++) {
    const done = new Promise<void>((resolve) => {
      let firstFrame = true
      onEvent = (e) => {
        if (e.type === 'audio' && firstFrame) {
          firstFrame = false
          marks.frame = performance.now()
          pipeline.replayFinished(e.turnId)
        }
        if (e.type === 'turn.end' && e.role === 'assistant') resolve()
      }
    })
    marks.eot = performance.now()
    // A complete question: words that read as an unfinished number ("question number 5") would be waited on by
    // the turn rules, and the bench would time the wait instead of the gateway.
    stt.emit({ type: 'end_of_turn', text: 'what time do you open tomorrow' })
    await done
    if (i < 20) continue // warm-up: JIT, connection pools
    samples.eotToWebhook.push(marks.webhook - marks.eot)
    samples.sseToTts.push(marks.ttsText - marks.sseText)
    samples.audioToFrame.push(marks.frame - marks.ttsAudio)
  }
  abort.abort()
  pipeline.close()
  backend.close()
  tts.close()

  const row = (hop: string, xs: number[]): BenchRow => ({
    hop,
    turns: xs.length,
    'p50 ms': Number(pct(xs, 50).toFixed(2)),
    'p99 ms': Number(pct(xs, 99).toFixed(2)),
    'max ms': Number(Math.max(...xs).toFixed(2)),
    'target p99 < 5 ms': pct(xs, 99) < 5 ? 'met' : 'MISSED',
  })
  return [
    row('end of turn -> webhook request', samples.eotToWebhook),
    row('first SSE text -> TTS request', samples.sseToTts),
    row('first TTS audio -> frame sent', samples.audioToFrame),
  ]
}
