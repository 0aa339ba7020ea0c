/**
 * Everything a browser end-to-end test needs: a real gateway (serving the demo page) over a real database, the
 * Deepgram-compatible STT fake scripted to transcribe what it hears, a customer backend fake with SSE replies,
 * an agent routed to that backend, and headless Chromium whose microphone is a WAV file.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type Page } from 'playwright-core'
import type { WebSocket } from 'ws'
import { startTestGateway, type TestGateway } from '../helpers/gateway.js'
import { startFakeDeepgram, type FakeDeepgramConnection } from '../fakes/deepgram/fake-deepgram.js'
import type { FakeWsServer } from '../fakes/deepgram/fake-ws-server.js'
import { startFakeBackend, type BackendRequest, type FakeBackend } from '../fakes/backend/fake-backend.js'
import { parsePipelineConfig } from '../../pipeline/config/validate.js'
import { updateAgent } from '../../gateway/store/agents.js'
import type { SessionRow } from '../../gateway/store/schema.js'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const SPEECH_WAV = fileURLToPath(new URL('../fixtures/browser/speech-16k.wav', import.meta.url))
/** What the STT fake "hears" in the WAV (and in push-to-talk turns). */
export const HEARD = 'I would like to book a table for two'
export const HEARD_PTT = 'push to talk works'
/** The reply the backend speaks to every user message. */
export const REPLY = 'Sure, a table for two at seven.'

/** Why the browser tests cannot run here, or undefined. */
export function skipReason(): string | undefined {
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (apt-get install -y chromium)`
  return undefined
}

/**
 * Chromium started ahead of other processes for the CPU (nice -5) where that is allowed (root): its audio capture
 * and playback are real time, as on a caller's computer, while the test run keeps both cores of a small machine
 * busy with other test files; starved, the fake microphone's audio reached the page late and the recording tests
 * that place it to within 40 ms failed now and then (1 run in 3 with four test files at once on two cores). Every
 * Chromium process and thread inherits the priority from this wrapper. Elsewhere: Chromium itself.
 */
let wrapper: string | undefined
function chromiumExecutable(): string {
  if (process.getuid?.() !== 0) return CHROMIUM
  if (wrapper === undefined) {
    wrapper = join(mkdtempSync(join(tmpdir(), 'voxgate-chromium-')), 'chromium')
    writeFileSync(wrapper, `#!/bin/sh\nexec nice -n -5 ${CHROMIUM} "$@"\n`, { mode: 0o755 })
  }
  return wrapper
}

/** Headless Chromium whose microphone is `micWav` (looped) and whose pages may play audio without a gesture. */
export function launchChromium(micWav: string = SPEECH_WAV): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumExecutable(),
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${micWav}`,
      '--autoplay-policy=no-user-gesture-required',
    ],
  })
}

/** Bytes of 8 kHz PCM16 the STT fake waits for before it transcribes (0.8 s of speech). */
const HEARD_AFTER_BYTES = 12_800

/**
 * The STT fake. Automatic turns: after enough audio it sends an interim, then a final `speech_final` result and
 * `UtteranceEnd`, once per stretch of audio (Chromium loops the WAV; VAD gating means only speech reaches the
 * fake). Push-to-talk: it only answers the pipeline's `Finalize` (the button released) with {@link HEARD_PTT}.
 */
function scriptDeepgram(pushToTalk: boolean) {
  return (c: FakeDeepgramConnection): void => {
    c.pendingTranscript = pushToTalk ? HEARD_PTT : ''
    let heard = 0
    let lastAudioAt = Date.now()
    c.socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) {
        // The fake answered a Finalize with pendingTranscript and cleared it: re-arm for the next turn.
        if (data.toString().includes('Finalize')) {
          heard = 0
          setImmediate(() => (c.pendingTranscript = pushToTalk ? HEARD_PTT : ''))
        }
        return
      }
      if (pushToTalk) return
      if (Date.now() - lastAudioAt > 1500) heard = 0
      lastAudioAt = Date.now()
      const before = heard
      heard += data.length
      if (before < HEARD_AFTER_BYTES / 2 && heard >= HEARD_AFTER_BYTES / 2) c.sendResults('I would like', { isFinal: false })
      if (before < HEARD_AFTER_BYTES && heard >= HEARD_AFTER_BYTES) {
        c.sendResults(HEARD, { isFinal: true, speechFinal: true })
        c.sendUtteranceEnd()
      }
    })
  }
}

export interface E2e {
  gw: TestGateway
  backend: FakeBackend
  stt: FakeWsServer<FakeDeepgramConnection>
  agentId: string
  browser: Browser
  /** Server side of every browser socket, in connection order (to simulate a network drop). */
  sockets: WebSocket[]
  /** `type` of every client frame the gateway received, in order. */
  clientTypes: string[]
  /** Microphone audio as the gateway received it (8 kHz PCM16) and when (Date.now()), per socket in order. */
  audioIn: { socket: number; at: number; pcm: Buffer }[]
  /** Agent audio as the gateway sent it (16 kHz PCM16 bytes) and when (Date.now()). */
  audioOut: { socket: number; at: number; bytes: number }[]
  /** Every other text message the gateway sent (`turn.start`, `response.end`, ...), with when and its role. */
  sent: { socket: number; at: number; type: string; role?: string }[]
  /** Sockets whose microphone audio the gateway dropped for arriving faster than real time (`audio_throttled`). */
  throttled: Set<number>
  /** Opens the demo page (a fresh browser context), fills the API key and agent, and connects. */
  openDemo(opts?: { mic?: boolean; connect?: boolean }): Promise<Page>
  /** The session row of the demo page's conversation. */
  sessionOf(page: Page): Promise<SessionRow>
  /**
   * Waits (up to 20 s) for the session's recording to be completed; the last session details and, when completed,
   * the downloaded file.
   */
  finishedRecording(sessionId: string): Promise<{ details: any; wav: Buffer | undefined }>
  /** Backend requests of a type (`message`, `session.start`, `data`). */
  requests(type: string): BackendRequest[]
  waitForRequest(pred: (r: BackendRequest) => boolean, timeoutMs?: number): Promise<BackendRequest>
  close(): Promise<void>
}

/** Starts the whole rig; `pushToTalk` saves the agent with `turn_manager.trigger: push_to_talk`. */
export async function startE2e(opts: { pushToTalk?: boolean; micWav?: string } = {}): Promise<E2e> {
  const stt = await startFakeDeepgram({ apiKey: 'dg-e2e-key', script: scriptDeepgram(opts.pushToTalk === true) })
  const sockets: WebSocket[] = []
  const clientTypes: string[] = []
  const audioIn: E2e['audioIn'] = []
  const audioOut: E2e['audioOut'] = []
  const sent: E2e['sent'] = []
  const throttled = new Set<number>()
  const gw = await startTestGateway(
    { STT_VENDOR_A_URL: stt.url, STT_VENDOR_A_API_KEY: 'dg-e2e-key' },
    {
      deps: {
        attachBrowser: (ws) => {
          const socket = sockets.push(ws) - 1
          ws.on('message', (d, binary) => {
            if (binary) return
            const m = JSON.parse(d.toString()) as { type?: unknown; content?: unknown }
            clientTypes.push(String(m.type))
            if (m.type === 'client.audio' && typeof m.content === 'string')
              audioIn.push({ socket, at: Date.now(), pcm: Buffer.from(m.content, 'base64') })
          })
          const send = ws.send.bind(ws)
          ws.send = ((data: string, ...rest: unknown[]) => {
            if (typeof data === 'string' && data.includes('"audio_throttled"')) throttled.add(socket)
            if (typeof data === 'string') {
              const m = JSON.parse(data) as { type?: unknown; content?: unknown; role?: unknown }
              if (m.type === 'response.audio' && typeof m.content === 'string') {
                audioOut.push({ socket, at: Date.now(), bytes: Buffer.from(m.content, 'base64').length })
              } else {
                sent.push({ socket, at: Date.now(), type: String(m.type), ...(typeof m.role === 'string' ? { role: m.role } : {}) })
              }
            }
            return (send as (...a: unknown[]) => void)(data, ...rest)
          }) as typeof ws.send
        },
      },
    },
  )
  const created = (await gw.request('POST', '/v1/agents', { body: { name: 'E2E' } })).body
  const backend = await startFakeBackend({ secret: created.webhook_secret })
  backend.reply = (req) => {
    const turnId = req.json?.turn_id
    // The welcome turn stays silent, so audio played in a test is the reply to what the user said or typed.
    if (req.json?.type !== 'message') return { kind: 'sse', steps: [{ data: { type: 'response.end', turn_id: turnId } }] }
    return {
      kind: 'sse',
      steps: [{ data: { type: 'response.tts', content: REPLY, turn_id: turnId } }, { data: { type: 'response.end', turn_id: turnId } }],
    }
  }
  const updated = await gw.request('POST', `/v1/agents/${created.id}`, { body: { webhook_url: backend.url } })
  if (updated.status !== 200) throw new Error(`agent update failed: ${updated.text}`)
  if (opts.pushToTalk) {
    const config = structuredClone(updated.body.config)
    config.clients = { browser: true, carrier: false }
    for (const p of config.plugins) if (p.use === 'turn_manager') p.options.trigger = 'push_to_talk'
    await updateAgent(gw.store.db, gw.orgId, created.id, { config: parsePipelineConfig(config, { allowInsecureLoopback: true }) })
  }
  const browser = await launchChromium(opts.micWav)
  const e2e: E2e = {
    gw,
    backend,
    stt,
    agentId: created.id,
    browser,
    sockets,
    clientTypes,
    audioIn,
    audioOut,
    sent,
    throttled,
    async openDemo(o = {}) {
      const context = await browser.newContext()
      const page = await context.newPage()
      page.on('pageerror', (e) => console.error('page error:', e.message))
      await page.goto(`${gw.url}/?agent=${encodeURIComponent(created.id)}${o.mic === false ? '&mic=off' : ''}`)
      await page.fill('[data-testid=api-key]', gw.apiKey)
      if (o.connect !== false) {
        await page.click('[data-testid=connect]')
        await page.waitForFunction(() => globalThis.voxgateDemo.status === 'connected', undefined, { timeout: 15_000 })
      }
      return page
    },
    async sessionOf(page) {
      const conversationId = await page.evaluate(() => globalThis.voxgateDemo.conversationId)
      return gw.store.db.selectFrom('sessions').selectAll().where('conversation_id', '=', String(conversationId)).executeTakeFirstOrThrow()
    },
    async finishedRecording(sessionId) {
      const path = `/v1/agents/${created.id}/sessions/${sessionId}`
      const deadline = Date.now() + 20_000
      let d = await gw.request('GET', path)
      while (d.body.recording_status !== 'completed' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50))
        d = await gw.request('GET', path)
      }
      if (d.body.recording_status !== 'completed') return { details: d.body, wav: undefined }
      const res = await fetch(`${gw.url}${path}/recording`, { headers: { authorization: `Bearer ${gw.apiKey}` } })
      return { details: d.body, wav: res.status === 200 ? Buffer.from(await res.arrayBuffer()) : undefined }
    },
    requests: (type) => backend.requests.filter((r) => r.json?.type === type),
    async waitForRequest(pred, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const found = backend.requests.find(pred)
        if (found) return found
        if (Date.now() > deadline) throw new Error('timed out waiting for a backend request')
        await new Promise((r) => setTimeout(r, 50))
      }
    },
    async close() {
      await browser.close()
      await gw.close()
      await backend.close()
      await stt.close()
    },
  }
  return e2e
}

/** What the demo page exposes as `window.voxgateDemo` (read inside page functions as `globalThis.voxgateDemo`). */
export interface DemoState {
  status: string
  transcript: { role: 'user' | 'assistant'; turnId: string; text: string; final: boolean }[]
  audioPlayedMs: number
  lastError: { code: string; message: string } | null
  notices: { code: string; message: string }[]
  conversationId: string | null
  client: { conversationId: string | undefined; pushToTalk: boolean; connected: boolean }
}

declare global {
  // eslint-disable-next-line no-var
  var voxgateDemo: DemoState
}
