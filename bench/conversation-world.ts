// The conversation bench's world: a real gateway (sessions, VAD, turn taking, barge-in, playout) wired to the STT
// vendor fakes driven by scripted words, the TTS fake and a customer backend that answers every turn with a
// sentence. Each corpus script plays as 20 ms mu-law frames in real time into a session of its own, on a phone
// line that never goes quiet (silence frames between and after the words).
import { readFileSync } from 'node:fs'
import type { CallSession } from '../gateway/sessions/call-session.js'
import type { PipelineEvent } from '../pipeline/index.js'
import { type FakeAssemblyAiConnection, startFakeAssemblyAi } from '../test/fakes/assemblyai/fake-assemblyai.js'
import { type FakeBackend, startFakeBackend } from '../test/fakes/backend/fake-backend.js'
import { playScriptedWords, type SttTiming } from '../test/fakes/conversation/scripted-words.js'
import { type FakeDeepgramConnection, startFakeDeepgram } from '../test/fakes/deepgram/fake-deepgram.js'
import type { FakeWsServer } from '../test/fakes/deepgram/fake-ws-server.js'
import { startFakeElevenLabs } from '../test/fakes/elevenlabs/fake-elevenlabs.js'
import type { ConversationCorpus, ConversationScript } from '../test/fixtures/conversations/corpus-types.js'
import { startTestGateway, type TestGateway } from '../test/helpers/gateway.js'
import { MemoryTransport } from '../test/helpers/memory-transport.js'

/** The STT vendors a script is heard through. */
export type SttVendor = 'vendor_a' | 'vendor_b'

/** What happened when one script played. */
export interface ScriptOutcome {
  id: string
  category: ConversationScript['category']
  vendor: SttVendor
  /** The script's longest pause between words. */
  maxPauseMs: number
  /** Agent requests sent before the caller's last word (the agent answered too early). */
  premature: number
  /** Last word -> the agent request for the caller's whole turn; null when there was none. */
  endDelayMs: number | null
  /** The agent's reply was cut off while the script played. */
  interrupted: boolean
  /**
   * The caller's first word -> the agent's audio stopped for the interruption: the pause that the cut-off followed,
   * or the cut-off itself.
   */
  interruptMs: number | null
  /** How long the reply was paused for caller speech and then resumed (the gap a backchannel cost); null: never. */
  pausedMs: number | null
  /** What the agent was sent for this script's words. */
  sentTexts: string[]
}

/** How the world behaves: STT delays, the turn manager's options (defaults when absent). */
export interface WorldOptions {
  interimDelayMs?: number
  finalDelayMs?: number
  turnManager?: Record<string, unknown>
}

const FRAME = 160
const FRAME_MS = 20
const WELCOME_SHORT = 'Hello.'
// Long enough (at 45 ms a character) that the caller's backchannel or interruption falls inside it.
const WELCOME_LONG =
  'Hello and thank you for calling the demo line. I can help you with your bill, your orders, deliveries, a new plan or anything else you need today.'
const ANSWER = 'Thank you, I have noted that down for you.'
/** Vendors' own endpointing at their defaults: Deepgram `endpointing` 300 ms, AssemblyAI 400 ms when confident. */
const ENDPOINTING: Record<SttVendor, number> = { vendor_a: 300, vendor_b: 400 }

/** The corpus as built by test/fixtures/conversations/generate-corpus.ts. */
export function loadCorpus(): ConversationCorpus {
  return JSON.parse(readFileSync(new URL('../test/fixtures/conversations/corpus.json', import.meta.url), 'utf8'))
}

function scriptAudio(script: ConversationScript): Buffer {
  return readFileSync(new URL(`../test/fixtures/conversations/${script.file}`, import.meta.url))
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)))

/** The running world; `run` plays one script (several may run at once). */
export interface ConversationWorld {
  run(script: ConversationScript, vendor: SttVendor): Promise<ScriptOutcome>
  close(): Promise<void>
}

/** Starts the fakes, a gateway and one agent per STT vendor. */
export async function startConversationWorld(options: WorldOptions = {}): Promise<ConversationWorld> {
  const timing = (vendor: SttVendor): SttTiming => ({
    interimDelayMs: options.interimDelayMs ?? 200,
    finalDelayMs: options.finalDelayMs ?? 250,
    endpointingMs: ENDPOINTING[vendor],
  })
  const deepgram = await startFakeDeepgram({ apiKey: 'dg-key' })
  const assembly = await startFakeAssemblyAi({ apiKey: 'aai-key' })
  const elevenlabs = await startFakeElevenLabs({ apiKey: 'el-key', msPerChar: 45, chunkMs: 100 })
  const gw: TestGateway = await startTestGateway({
    STT_VENDOR_A_URL: deepgram.url,
    STT_VENDOR_A_API_KEY: 'dg-key',
    STT_VENDOR_B_URL: assembly.url,
    STT_VENDOR_B_API_KEY: 'aai-key',
    TTS_VENDOR_A_URL: elevenlabs.url,
    TTS_VENDOR_A_API_KEY: 'el-key',
  })
  const created = (await gw.request('POST', '/v1/agents', { body: { template_id: 'voice-agent-webhook' } })).body
  const backend: FakeBackend = await startFakeBackend({ secret: created.webhook_secret })
  let nextWelcome = WELCOME_SHORT
  backend.reply = (request) => {
    const turnId = request.json?.turn_id
    const content = request.json?.type === 'message' ? ANSWER : nextWelcome
    return {
      kind: 'sse',
      steps: [{ data: { type: 'response.tts', content, turn_id: turnId } }, { data: { type: 'response.end', turn_id: turnId } }],
    }
  }
  const agents: Record<SttVendor, string> = { vendor_a: '', vendor_b: '' }
  for (const vendor of ['vendor_a', 'vendor_b'] as const) {
    const agent = (await gw.request('POST', '/v1/agents', { body: { template_id: 'voice-agent-webhook' } })).body
    const config = structuredClone(created.config)
    config.plugins = config.plugins.map((p: { use: string; options: Record<string, unknown> }) => {
      if (p.use === 'agent.webhook') return { ...p, options: { ...p.options, url: `${backend.url}/agent` } }
      if (p.use.startsWith('stt.'))
        return vendor === 'vendor_a' ? { use: 'stt.vendor_a', options: { model_id: 'nova-3', language: 'en' } } : { use: 'stt.vendor_b' }
      if (p.use === 'turn_manager') return { ...p, options: { ...p.options, ...options.turnManager } }
      return p
    })
    const updated = await gw.request('POST', `/v1/agents/${agent.id}`, { body: { config } })
    if (updated.status !== 200) throw new Error(updated.text)
    agents[vendor] = agent.id
  }
  // Sessions open one at a time, so the n-th STT connection is the n-th session's and the welcome text is its own.
  let opening: Promise<unknown> = Promise.resolve()
  const opened: Record<SttVendor, number> = { vendor_a: 0, vendor_b: 0 }

  async function open(script: ConversationScript, vendor: SttVendor) {
    const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agents[vendor] } })
    if (auth.status !== 200) throw new Error(auth.text)
    const transport = new MemoryTransport({ input: 'ulaw_8000', output: 'ulaw_8000' })
    nextWelcome = script.whileAgentSpeaks ? WELCOME_LONG : WELCOME_SHORT
    const r = await gw.gateway.sessions.open(auth.body.client_session_key, transport, { ipAddress: null, countryCode: null })
    if (!r.ok) throw new Error(r.reason)
    const index = opened[vendor]++
    const servers: { vendor_a: FakeWsServer<FakeDeepgramConnection>; vendor_b: FakeWsServer<FakeAssemblyAiConnection> } = {
      vendor_a: deepgram,
      vendor_b: assembly,
    }
    const connection = await servers[vendor].connection(index, 10_000)
    await backend.request(backend.requests.length - 1).catch(() => undefined)
    await sleep(50)
    return { session: r.session, transport, connection }
  }

  return {
    async run(script, vendor) {
      const turn = opening.then(() => open(script, vendor))
      opening = turn.catch(() => undefined)
      const { session, transport, connection } = await turn
      return playScript(script, vendor, session, transport, connection, timing(vendor), backend)
    },
    async close() {
      await gw.close()
      await backend.close()
      await deepgram.close()
      await assembly.close()
      await elevenlabs.close()
    },
  }
}

/** Pushes frames in real time: silence until `script` starts, its audio, silence after. */
class PhoneLine {
  #audio: Buffer | undefined
  #offset = 0
  #stopped = false
  #started: (at: number) => void = () => undefined
  readonly #session: CallSession

  constructor(session: CallSession) {
    this.#session = session
    void this.#loop()
  }

  /** Starts the script's audio on the next frame; resolves with the time (performance.now) its first frame went. */
  say(audio: Buffer): Promise<number> {
    return new Promise((resolve) => {
      this.#started = resolve
      this.#audio = audio
      this.#offset = 0
    })
  }

  stop(): void {
    this.#stopped = true
  }

  async #loop(): Promise<void> {
    const silence = Buffer.alloc(FRAME, 0xff)
    const t0 = performance.now()
    for (let n = 0; !this.#stopped; n++) {
      await sleep(t0 + n * FRAME_MS - performance.now())
      let frame: Buffer = silence
      if (this.#audio !== undefined && this.#offset < this.#audio.length) {
        if (this.#offset === 0) this.#started(performance.now())
        frame = this.#audio.subarray(this.#offset, this.#offset + FRAME)
        this.#offset += FRAME
      }
      this.#session.input.pushAudio(frame)
    }
  }
}

async function playScript(
  script: ConversationScript,
  vendor: SttVendor,
  session: CallSession,
  transport: MemoryTransport,
  connection: FakeDeepgramConnection | FakeAssemblyAiConnection,
  timing: SttTiming,
  backend: FakeBackend,
): Promise<ScriptOutcome> {
  const line = new PhoneLine(session)
  const events: { at: number; e: PipelineEvent }[] = []
  const seen = events.length
  const listen = (e: PipelineEvent) => events.push({ at: performance.now(), e })
  const unlisten = watch(transport, listen)
  try {
    if (script.whileAgentSpeaks) {
      await transport.waitFor((e) => e.type === 'audio', 15_000)
      await sleep(script.afterReplyMs)
    } else {
      await transport.waitFor((e) => e.type === 'turn.end' && e.role === 'assistant', 15_000)
      await sleep(300)
    }
    const audio = scriptAudio(script)
    const started = await line.say(audio)
    const target =
      vendor === 'vendor_a'
        ? { vendor, connection: connection as FakeDeepgramConnection }
        : { vendor, connection: connection as FakeAssemblyAiConnection }
    const stop = playScriptedWords(target, script.words, started, timing)
    // Long enough after the last word for the longest wait the turn manager may choose, then the answer.
    await sleep(script.durationMs + 6000)
    stop()
    const lastWordAt = started + script.words.at(-1)!.endMs
    const firstWordAt = started + script.words[0]!.startMs
    const sessionId = session.row.id
    const messages = backend.requests.filter(
      (r) => r.json?.session_id === sessionId && r.json?.type === 'message' && r.arrivedAt >= started,
    )
    const after = messages.filter((r) => r.arrivedAt >= lastWordAt)
    const heard = events.slice(seen).filter((x) => x.at >= started)
    const cut = heard.find((x) => x.e.type === 'clear_playback')
    const stoppedTime = cut === undefined ? undefined : stoppedAt(heard, cut.at)
    return {
      id: script.id,
      category: script.category,
      vendor,
      maxPauseMs: script.maxPauseMs,
      premature: messages.length - after.length,
      endDelayMs: after[0] === undefined ? null : after[0].arrivedAt - lastWordAt,
      interrupted: cut !== undefined,
      interruptMs: stoppedTime === undefined ? null : stoppedTime - firstWordAt,
      pausedMs: resumedPauseMs(heard),
      sentTexts: messages.map((r) => String(r.json?.text ?? '')),
    }
  } finally {
    unlisten()
    line.stop()
    await session.end('caller_hangup')
  }
}

/** When the agent's audio stopped for the cut-off at `cutAt`: the pause it followed (with no resume between), or then. */
function stoppedAt(events: readonly { at: number; e: PipelineEvent }[], cutAt: number): number {
  let pausedAt: number | undefined
  for (const x of events) {
    if (x.at > cutAt) break
    if (x.e.type === 'pause_playback') pausedAt ??= x.at
    if (x.e.type === 'resume_playback') pausedAt = undefined
  }
  return pausedAt ?? cutAt
}

/** The time the reply spent paused and then resumed; null when it never was. */
function resumedPauseMs(events: readonly { at: number; e: PipelineEvent }[]): number | null {
  let total: number | null = null
  let pausedAt: number | undefined
  for (const x of events) {
    if (x.e.type === 'pause_playback') pausedAt ??= x.at
    if (x.e.type === 'resume_playback' && pausedAt !== undefined) {
      total = (total ?? 0) + x.at - pausedAt
      pausedAt = undefined
    }
  }
  return total
}

/** Calls `listener` with each event the transport gets from now on; returns the way to stop. */
function watch(transport: MemoryTransport, listener: (e: PipelineEvent) => void): () => void {
  const deliver = transport.deliver.bind(transport)
  transport.deliver = (e: PipelineEvent) => {
    listener(e)
    deliver(e)
  }
  return () => {
    transport.deliver = deliver
  }
}
