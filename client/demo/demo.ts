import { VoxgateClient, type Authorization, type AuthorizeRequest, type VoxgateStatus } from '../src/voxgate-client.js'

/** One line of the demo transcript. */
interface TranscriptLine {
  role: 'user' | 'assistant'
  turnId: string
  text: string
  final: boolean
}

/** State exposed for browser tests as `window.voxgateDemo`. */
interface DemoState {
  status: VoxgateStatus | 'connecting'
  transcript: TranscriptLine[]
  audioPlayedMs: number
  lastError: { code: string; message: string } | null
  /** Informational messages of the gateway (e.g. no speech recognition configured), shown apart from errors. */
  notices: { code: string; message: string }[]
  conversationId: string | null
  client: VoxgateClient
}

declare global {
  interface Window {
    voxgateDemo: DemoState
  }
}

function element<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id)
  if (!found) throw new Error(`missing #${id}`)
  return found as T
}

const baseUrl = element<HTMLInputElement>('base-url')
const apiKey = element<HTMLInputElement>('api-key')
const agentId = element<HTMLInputElement>('agent-id')
const connectButton = element<HTMLButtonElement>('connect')
const disconnectButton = element<HTMLButtonElement>('disconnect')
const reconnectButton = element<HTMLButtonElement>('reconnect')
const talk = element<HTMLButtonElement>('talk')
const meter = element<HTMLDivElement>('meter').firstElementChild as HTMLDivElement
const transcriptBox = element<HTMLDivElement>('transcript')
const form = element<HTMLFormElement>('text-form')
const textInput = element<HTMLInputElement>('text')
const sendButton = element<HTMLButtonElement>('send')
const statusLine = element<HTMLDivElement>('status')
const errorLine = element<HTMLDivElement>('error')
const noticeLine = element<HTMLDivElement>('notice')

/**
 * Codes the gateway sends as `error` messages that are not failures: the session goes on as expected. A gateway
 * without an STT key (a fresh machine) says so on every connect; the page shows it as information, not in red.
 */
const INFORMATIONAL = new Set(['stt_not_configured'])

const params = new URLSearchParams(location.search)
baseUrl.value = params.get('base') ?? location.origin
agentId.value = params.get('agent') ?? localStorage.getItem('voxgate-demo-agent') ?? ''

/** Where the page keeps an agent link's token for this tab (a reload keeps talking to the same agent). */
const LINK_STORAGE_KEY = 'voxgate-demo-link'

/**
 * An agent link (`/#link=<token>`, printed at first start) authorizes sessions with one agent: no API key, no
 * agent id to type. The token arrives in the URL fragment, which is never sent to a server; the page takes it out
 * of the address bar (and the tab's history) at once and keeps it in session storage for this tab only.
 */
function takeLinkToken(): string | null {
  const found = /(?:^#|&)link=([^&]+)/.exec(location.hash)
  if (found?.[1] !== undefined) {
    sessionStorage.setItem(LINK_STORAGE_KEY, decodeURIComponent(found[1]))
    history.replaceState(null, '', location.pathname + location.search)
  }
  return sessionStorage.getItem(LINK_STORAGE_KEY)
}
const linkToken = takeLinkToken()
element<HTMLFieldSetElement>('key-fields').hidden = linkToken !== null
element<HTMLDivElement>('link-fields').hidden = linkToken === null
element<HTMLButtonElement>('forget-link').addEventListener('click', () => {
  sessionStorage.removeItem(LINK_STORAGE_KEY)
  location.reload()
})

const client = new VoxgateClient({
  onStatus: (status, detail) => {
    state.status = status
    const reason = status === 'disconnected' && detail?.code ? ` (${detail.code}${detail.reason ? ` ${detail.reason}` : ''})` : ''
    setStatus(`${status}${reason}`)
    updateControls()
  },
  onTranscript: (t) => upsert({ role: 'user', turnId: t.turnId, text: t.text, final: t.final }),
  onAssistantText: (t) => upsert({ role: 'assistant', turnId: t.turnId, text: t.text, final: t.final }),
  onData: (content, turnId) => {
    const delta = typeof content === 'object' && content !== null ? (content as { delta?: unknown }).delta : undefined
    if (typeof delta === 'string') {
      const line = state.transcript.find((l) => l.role === 'assistant' && l.turnId === turnId)
      upsert({ role: 'assistant', turnId, text: (line?.text ?? '') + delta, final: false })
    }
  },
  onAudioPlayed: (ms) => {
    state.audioPlayedMs += ms
  },
  onError: (error) => {
    if (INFORMATIONAL.has(error.code)) {
      state.notices.push({ code: error.code, message: error.message })
      noticeLine.textContent = `Note: ${error.message}`
      return
    }
    state.lastError = { code: error.code, message: error.message }
    errorLine.textContent = `${error.code}: ${error.message}`
  },
  onLevel: (level) => {
    // Speech RMS sits around 0.02-0.3: a square-root scale makes the meter readable.
    meter.style.width = `${Math.min(100, Math.sqrt(level) * 180).toFixed(0)}%`
  },
})

const state: DemoState = {
  status: 'disconnected',
  transcript: [],
  audioPlayedMs: 0,
  lastError: null,
  notices: [],
  conversationId: null,
  client,
}
window.voxgateDemo = state

/**
 * Demo only: the page calls authorize_session itself with the key typed in, or the agent link's endpoint with the
 * link's token. A real frontend asks its own backend.
 */
async function authorize(request: AuthorizeRequest): Promise<Authorization> {
  const base = baseUrl.value.replace(/\/+$/, '')
  const { metadata: _metadata, ...linkRequest } = request
  const response = await fetch(
    linkToken === null ? `${base}/v1/agents/web/authorize_session` : `${base}/v1/agent_links/authorize_session`,
    {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${linkToken ?? apiKey.value}` },
      body: JSON.stringify(linkToken === null ? { agent_id: agentId.value.trim(), ...request } : linkRequest),
    },
  )
  const body = (await response.json().catch(() => ({}))) as Partial<Authorization> & { error?: string }
  if (!response.ok || typeof body.client_session_key !== 'string') {
    throw new Error(body.error ?? `authorize_session answered HTTP ${response.status}`)
  }
  return body as Authorization
}

const connectOptions = {
  authorize,
  get wsUrl() {
    return baseUrl.value.replace(/^http/, 'ws')
  },
  microphone: params.get('mic') !== 'off',
}

async function run(action: () => Promise<void>): Promise<void> {
  errorLine.textContent = ''
  noticeLine.textContent = ''
  state.status = 'connecting'
  setStatus('connecting...')
  updateControls()
  try {
    await action()
    state.conversationId = client.conversationId ?? null
    if (linkToken === null) localStorage.setItem('voxgate-demo-agent', agentId.value.trim())
  } catch (error) {
    state.lastError ??= { code: 'client_connect_failed', message: String(error) }
    errorLine.textContent = error instanceof Error ? error.message : String(error)
  }
  updateControls()
}

connectButton.addEventListener('click', () => void run(() => client.connect(connectOptions)))
reconnectButton.addEventListener('click', () => void run(() => client.reconnect()))
disconnectButton.addEventListener('click', () => void client.disconnect().then(updateControls))

let micOn = true
talk.addEventListener('pointerdown', () => {
  if (!client.pushToTalk) return
  client.startTurn()
  talk.classList.add('active')
})
const release = () => {
  if (!client.pushToTalk || !talk.classList.contains('active')) return
  client.endTurn()
  talk.classList.remove('active')
}
talk.addEventListener('pointerup', release)
talk.addEventListener('pointerleave', release)
talk.addEventListener('click', () => {
  if (client.pushToTalk) return
  micOn = !micOn
  client.setMuted(!micOn)
  updateControls()
})

form.addEventListener('submit', (event) => {
  event.preventDefault()
  const text = textInput.value
  if (text.trim().length === 0) return
  // The gateway echoes typed text as the user's transcript, which shows it.
  client.sendText(text)
  textInput.value = ''
})

function upsert(line: TranscriptLine): void {
  const existing = state.transcript.find((l) => l.role === line.role && l.turnId === line.turnId)
  if (existing) Object.assign(existing, line)
  else state.transcript.push(line)
  render()
}

function render(): void {
  transcriptBox.replaceChildren(
    ...state.transcript.map((line) => {
      const div = document.createElement('div')
      div.className = `line ${line.role}${line.final ? '' : ' interim'}`
      div.dataset.testid = `line-${line.role}`
      const who = document.createElement('b')
      who.textContent = line.role === 'user' ? 'You: ' : 'Agent: '
      const text = document.createElement('span')
      text.textContent = line.text
      div.append(who, text)
      return div
    }),
  )
  transcriptBox.scrollTop = transcriptBox.scrollHeight
}

function setStatus(text: string): void {
  const mode = client.connected ? ` - ${client.pushToTalk ? 'push to talk' : 'hands-free'}` : ''
  statusLine.textContent = `${text}${mode}`
}

function updateControls(): void {
  const connected = client.connected
  connectButton.disabled = connected || state.status === 'connecting'
  disconnectButton.disabled = !connected
  reconnectButton.disabled = connected || client.conversationId === undefined || state.status === 'connecting'
  talk.disabled = !connected
  sendButton.disabled = !connected
  talk.textContent = client.pushToTalk ? 'Hold to talk' : micOn ? 'Mic on (click to mute)' : 'Mic muted (click to unmute)'
}

updateControls()
