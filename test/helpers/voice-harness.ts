/**
 * A gateway wired to speech-vendor fakes (Deepgram- and ElevenLabs-compatible) and a customer-backend fake,
 * with one agent that uses them; sessions are driven through a MemoryTransport with carrier audio formats.
 */
import type { Log } from '../../core/log.js'
import { startTestGateway, type TestGateway } from './gateway.js'
import { startFakeDeepgram, transcriptsInTurn, type FakeDeepgramConnection } from '../fakes/deepgram/fake-deepgram.js'
import { startFakeElevenLabs } from '../fakes/elevenlabs/fake-elevenlabs.js'
import { startFakeBackend, type FakeBackend } from '../fakes/backend/fake-backend.js'
import { MemoryTransport } from './memory-transport.js'
import type { CallSession } from '../../gateway/sessions/call-session.js'
import { encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { loadFixture } from '../fixtures/audio/signals.js'
import type { FakeWsServer } from '../fakes/deepgram/fake-ws-server.js'
import type { FakeElevenLabsConnection } from '../fakes/elevenlabs/fake-elevenlabs.js'

export interface VoiceHarness {
  gw: TestGateway
  backend: FakeBackend
  deepgram: FakeWsServer<FakeDeepgramConnection>
  elevenlabs: FakeWsServer<FakeElevenLabsConnection>
  agent: any
  /** What the STT fake answers each Finalize with, in order (then empty). */
  transcripts: string[]
  open(configOverride?: Record<string, unknown>): Promise<{ session: CallSession; transport: MemoryTransport }>
  close(): Promise<void>
}

export async function startVoiceHarness(
  options: {
    ttsChunkIntervalMs?: number
    ttsMsPerChar?: number
    minuteMs?: number
    turnManager?: Record<string, unknown>
    /** The gateway's logger (default: silent). */
    log?: Log
  } = {},
): Promise<VoiceHarness> {
  const transcripts: string[] = []
  const deepgram = await startFakeDeepgram({ apiKey: 'dg-key', script: transcriptsInTurn(transcripts) })
  const elevenlabs = await startFakeElevenLabs({
    apiKey: 'el-key',
    msPerChar: options.ttsMsPerChar ?? 20,
    chunkMs: 100,
    chunkIntervalMs: options.ttsChunkIntervalMs ?? 0,
  })
  const gw = await startTestGateway(
    {
      STT_VENDOR_A_URL: deepgram.url,
      STT_VENDOR_A_API_KEY: 'dg-key',
      TTS_VENDOR_A_URL: elevenlabs.url,
      TTS_VENDOR_A_API_KEY: 'el-key',
    },
    { deps: { sessionOverrides: { minuteMs: options.minuteMs ?? 60_000 } }, ...(options.log !== undefined && { log: options.log }) },
  )
  const created = (await gw.request('POST', '/v1/agents', { body: { template_id: 'voice-agent-webhook' } })).body
  const backend = await startFakeBackend({ secret: created.webhook_secret })
  const config = structuredClone(created.config)
  config.plugins = config.plugins.map((p: { use: string; options: Record<string, unknown> }) => {
    if (p.use === 'agent.webhook') return { ...p, options: { ...p.options, url: `${backend.url}/agent` } }
    if (p.use === 'stt.vendor_a') return { use: 'stt.vendor_a', options: { model_id: 'nova-3', language: 'en' } }
    if (p.use === 'turn_manager') return { ...p, options: { ...p.options, base_timeout_ms: 800, ...options.turnManager } }
    return p
  })
  const updated = await gw.request('POST', `/v1/agents/${created.id}`, { body: { config } })
  if (updated.status !== 200) throw new Error(updated.text)
  const agent = updated.body
  return {
    gw,
    backend,
    deepgram,
    elevenlabs,
    agent,
    transcripts,
    async open(configOverride) {
      const auth = await gw.request('POST', '/v1/agents/web/authorize_session', {
        body: { agent_id: agent.id, ...(configOverride && { config: configOverride }) },
      })
      if (auth.status !== 200) throw new Error(auth.text)
      const transport = new MemoryTransport({ input: 'ulaw_8000', output: 'ulaw_8000' })
      const r = await gw.gateway.sessions.open(auth.body.client_session_key, transport, { ipAddress: null, countryCode: null })
      if (!r.ok) throw new Error(r.reason)
      return { session: r.session, transport }
    },
    async close() {
      await gw.close()
      await backend.close()
      await deepgram.close()
      await elevenlabs.close()
    },
  }
}

/** Streams a fixture WAV (8 kHz) into a session as 20 ms mu-law frames, `speed` times faster than real time. */
export async function speak(session: CallSession, fixture: string, speed = 4): Promise<void> {
  const f = loadFixture(fixture)
  const ulaw = Buffer.from(encodeMulaw(f.samples))
  for (let i = 0; i < ulaw.length; i += 160) {
    session.input.pushAudio(ulaw.subarray(i, i + 160))
    if ((i / 160) % 4 === 3) await new Promise((r) => setTimeout(r, 80 / speed))
  }
}

/** Pushes `ms` of mu-law silence (the line stays open, as a phone's does). */
export async function silence(session: CallSession, ms: number, speed = 4): Promise<void> {
  const frame = Buffer.alloc(160, 0xff)
  for (let i = 0; i < ms / 20; i++) {
    session.input.pushAudio(frame)
    if (i % 4 === 3) await new Promise((r) => setTimeout(r, 80 / speed))
  }
}
