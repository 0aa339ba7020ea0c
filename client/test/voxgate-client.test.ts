// VoxgateClient's wire behaviour, in Node: a real `ws` server on port 0 speaks the gateway side; the browser audio
// APIs (AudioContext, AudioWorkletNode, getUserMedia) are small fakes with a real clock. Run:
// `npx tap client/test/*.test.ts`. The real-browser check is the Chromium page test (see client/README.md).
import t, { type Test } from 'tap'
import { WebSocket as NodeWebSocket, WebSocketServer, type WebSocket as ServerSocket } from 'ws'
import type { AddressInfo } from 'node:net'
import { VoxgateClient, type Authorization, type AuthorizeRequest, type VoxgateHandlers } from '../src/voxgate-client.js'

class FakeBufferSource {
  buffer: { duration: number } | null = null
  onended: (() => void) | null = null
  #timer: ReturnType<typeof setTimeout> | undefined
  constructor(private readonly context: FakeAudioContext) {}
  connect(): void {}
  disconnect(): void {}
  start(at: number): void {
    const ms = (at - this.context.currentTime + (this.buffer?.duration ?? 0)) * 1000
    this.#timer = setTimeout(() => this.onended?.(), Math.max(0, ms))
  }
  stop(): void {
    clearTimeout(this.#timer)
  }
}

class FakeAudioContext {
  readonly sampleRate = 48_000
  state = 'running'
  readonly destination = {}
  readonly audioWorklet = { addModule: async (_url: string) => undefined }
  readonly #origin = performance.now()
  get currentTime(): number {
    return (performance.now() - this.#origin) / 1000
  }
  createBuffer(_channels: number, length: number, rate: number) {
    return { duration: length / rate, copyToChannel: () => undefined }
  }
  createBufferSource(): FakeBufferSource {
    return new FakeBufferSource(this)
  }
  createMediaStreamSource() {
    return { connect: () => undefined, disconnect: () => undefined }
  }
  async resume(): Promise<void> {}
  async close(): Promise<void> {
    this.state = 'closed'
  }
}

class FakeWorkletNode {
  static last: FakeWorkletNode | undefined
  readonly port: { onmessage: ((event: { data: Float32Array }) => void) | null } = { onmessage: null }
  constructor() {
    FakeWorkletNode.last = this
  }
  disconnect(): void {}
  /** What the inline worklet would post: a block of float samples at the context rate. */
  feed(samples: Float32Array): void {
    this.port.onmessage?.({ data: samples })
  }
}

const globals = globalThis as Record<string, unknown>
globals.WebSocket = NodeWebSocket
globals.AudioContext = FakeAudioContext
globals.AudioWorkletNode = FakeWorkletNode
Object.defineProperty(globalThis, 'navigator', {
  configurable: true,
  value: { mediaDevices: { getUserMedia: async () => ({ getTracks: () => [] }) } },
})

/** 100 ms of a 440 Hz tone at 48 kHz. */
function micBlock(): Float32Array {
  const out = new Float32Array(4800)
  for (let i = 0; i < out.length; i++) out[i] = 0.3 * Math.sin((2 * Math.PI * 440 * i) / 48_000)
  return out
}

function pcmBase64(seconds: number): string {
  const samples = new Int16Array(Math.round(16_000 * seconds)).fill(1000)
  return Buffer.from(samples.buffer).toString('base64')
}

interface Gateway {
  wsUrl: string
  connections: Array<{ url: string; socket: ServerSocket; messages: Array<Record<string, unknown>> }>
  next(index: number, predicate: (m: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>
}

async function startGateway(t: Test): Promise<Gateway> {
  const server = new WebSocketServer({ port: 0 })
  await new Promise((resolve) => server.once('listening', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const connections: Gateway['connections'] = []
  const waiters = new Set<() => void>()
  server.on('connection', (socket, request) => {
    const connection = { url: request.url ?? '', socket, messages: [] as Array<Record<string, unknown>> }
    connections.push(connection)
    socket.on('message', (data) => {
      connection.messages.push(JSON.parse(String(data)) as Record<string, unknown>)
      for (const waiter of [...waiters]) waiter()
    })
    for (const waiter of [...waiters]) waiter()
  })
  const next: Gateway['next'] = (index, predicate, timeoutMs = 3000) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = connections[index]?.messages.find(predicate)
        if (found) {
          waiters.delete(check)
          clearTimeout(timer)
          resolve(found)
        }
      }
      const timer = setTimeout(() => {
        waiters.delete(check)
        reject(new Error(`no matching message; got ${JSON.stringify(connections[index]?.messages.map((m) => m.type))}`))
      }, timeoutMs)
      waiters.add(check)
      check()
    })
  return { wsUrl: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, connections, next }
}

function recorder() {
  const log: Array<[string, unknown]> = []
  let played = 0
  const handlers: VoxgateHandlers = {
    onStatus: (s) => log.push(['status', s]),
    onTranscript: (x) => log.push(['transcript', x.text + (x.final ? ' [final]' : '')]),
    onAssistantText: (x) => log.push(['assistant', x.text + (x.final ? ' [final]' : '')]),
    onData: (c) => log.push(['data', c]),
    onError: (e) => log.push(['error', e.code]),
    onLevel: (l) => log.push(['level', l]),
    onAudioPlayed: (ms) => {
      played += ms
    },
  }
  return { log, handlers, played: () => played, of: (kind: string) => log.filter(([k]) => k === kind).map(([, v]) => v) }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function authorizer(trigger: 'automatic' | 'push_to_talk') {
  const requests: AuthorizeRequest[] = []
  const authorize = async (request: AuthorizeRequest): Promise<Authorization> => {
    requests.push(request)
    return { client_session_key: `key-${requests.length}`, conversation_id: 'conv-1', config: { transcription: { trigger } } }
  }
  return { requests, authorize }
}

t.test('automatic mode: ready, mic audio, playback + replay_finished, barge-in, transcripts, text, reconnect', async (t) => {
  const gateway = await startGateway(t)
  const rec = recorder()
  const auth = authorizer('automatic')
  const client = new VoxgateClient(rec.handlers)
  t.teardown(() => client.disconnect())
  await client.connect({ authorize: auth.authorize, wsUrl: gateway.wsUrl, metadata: { page: 'test' } })

  t.same(auth.requests[0], { sdk_version: '0.1.0', metadata: { page: 'test' } })
  t.equal(gateway.connections[0]?.url, '/v1/agents/web/websocket?client_session_key=key-1')
  await gateway.next(0, (m) => m.type === 'client.ready')
  t.same(gateway.connections[0]?.messages[0], { type: 'client.ready' }, 'client.ready comes first')
  t.same(rec.of('status'), ['authorized', 'connected'])

  // Microphone: 48 kHz blocks become 100 ms chunks of 8 kHz PCM16.
  const node = FakeWorkletNode.last!
  node.feed(micBlock())
  node.feed(micBlock())
  const audio = await gateway.next(0, (m) => m.type === 'client.audio')
  t.equal(Buffer.from(String(audio.content), 'base64').length, 1600, '800 samples, 16-bit')
  t.ok((rec.of('level')[0] as number) > 0.1, 'level reported')

  // Playback drains -> replay_finished for the turn.
  const server = gateway.connections[0]!.socket
  server.send(JSON.stringify({ type: 'turn.start', role: 'assistant', turn_id: 'assistant-1' }))
  server.send(JSON.stringify({ type: 'response.audio', content: pcmBase64(0.1), delta_id: 'd1', turn_id: 'assistant-1' }))
  server.send(JSON.stringify({ type: 'response.audio', content: pcmBase64(0.1), delta_id: 'd2', turn_id: 'assistant-1' }))
  const finished = await gateway.next(0, (m) => m.type === 'trigger.response.audio.replay_finished')
  t.same(finished, { type: 'trigger.response.audio.replay_finished', reason: 'completed', turn_id: 'assistant-1' })
  t.ok(Math.abs(rec.played() - 200) < 1, `200 ms played (${rec.played()})`)

  // Barge-in: a user turn starts while 2 s are queued -> stopped at once, no replay_finished in automatic mode.
  server.send(JSON.stringify({ type: 'response.audio', content: pcmBase64(2), delta_id: 'd3', turn_id: 'assistant-2' }))
  await delay(150)
  server.send(JSON.stringify({ type: 'turn.start', role: 'user', turn_id: 'user-2' }))
  await delay(100)
  const playedAtStop = rec.played()
  t.ok(playedAtStop > 200 && playedAtStop < 600, `stopped after a partial chunk (${playedAtStop.toFixed(0)} ms total)`)
  await delay(300)
  t.equal(rec.played(), playedAtStop, 'nothing plays after the barge-in')
  t.equal(gateway.connections[0]!.messages.filter((m) => m.type === 'trigger.response.audio.replay_finished').length, 1)

  // Transcripts and assistant text.
  for (const m of [
    { type: 'user.transcript.interim_delta', content: 'book a', turn_id: 'user-2', delta_counter: 0 },
    { type: 'user.transcript.delta', content: 'book a table', turn_id: 'user-2', delta_counter: 0 },
    { type: 'user.transcript.interim_delta', content: 'for two', turn_id: 'user-2', delta_counter: 1 },
    { type: 'user.transcript', content: 'Book a table for two.', turn_id: 'user-2' },
    { type: 'response.text.delta', content: 'Sure, ', turn_id: 'assistant-3' },
    { type: 'response.text.delta', content: 'when?', turn_id: 'assistant-3' },
    { type: 'response.text', content: 'Sure, when?', turn_id: 'assistant-3' },
    { type: 'response.data', content: { delta: 'x' }, turn_id: 'assistant-3' },
    { type: 'error', code: 'session_timeout', message: 'bye soon' },
  ]) {
    server.send(JSON.stringify(m))
  }
  await delay(100)
  t.same(rec.of('transcript'), ['book a', 'book a table', 'book a table for two', 'Book a table for two. [final]'])
  t.same(rec.of('assistant'), ['Sure, ', 'Sure, when?', 'Sure, when? [final]'])
  t.same(rec.of('data'), [{ delta: 'x' }])
  t.same(rec.of('error'), ['session_timeout'])

  client.sendText('   ')
  client.sendText('hello')
  client.sendData({ cart: 2 })
  await gateway.next(0, (m) => m.type === 'client.response.data')
  const sent = gateway.connections[0]!.messages.filter((m) => String(m.type).startsWith('client.response'))
  t.same(sent, [
    { type: 'client.response.text', content: 'hello' },
    { type: 'client.response.data', data: { cart: 2 } },
  ])

  // Reconnect continues the conversation with a fresh key.
  await client.reconnect()
  t.same(auth.requests[1], { sdk_version: '0.1.0', conversation_id: 'conv-1', metadata: { page: 'test' } })
  t.equal(gateway.connections[1]?.url, '/v1/agents/web/websocket?client_session_key=key-2')
  await gateway.next(1, (m) => m.type === 'client.ready')
  t.same(rec.of('status').slice(2), ['disconnected', 'authorized', 'connected'])
})

t.test('push-to-talk: mic audio only between startTurn and endTurn; start halts playback', async (t) => {
  const gateway = await startGateway(t)
  const rec = recorder()
  const client = new VoxgateClient(rec.handlers)
  t.teardown(() => client.disconnect())
  await client.connect({ authorize: authorizer('push_to_talk').authorize, wsUrl: gateway.wsUrl })
  t.ok(client.pushToTalk)
  const node = FakeWorkletNode.last!
  const messages = gateway.connections[0]!.messages
  const server = gateway.connections[0]!.socket

  node.feed(micBlock())
  node.feed(micBlock())
  await delay(50)
  t.equal(messages.filter((m) => m.type === 'client.audio').length, 0, 'nothing streamed before the button')

  server.send(JSON.stringify({ type: 'response.audio', content: pcmBase64(1), delta_id: 'd1', turn_id: 'assistant-1' }))
  await delay(100)
  client.startTurn()
  for (let i = 0; i < 4; i++) node.feed(micBlock()) // 400 ms: three full chunks and a partial one
  client.endTurn()
  node.feed(micBlock())
  await gateway.next(0, (m) => m.type === 'trigger.turn.end')
  await delay(50)
  const types = messages.map((m) => m.type)
  t.same(types, [
    'client.ready',
    'trigger.response.audio.replay_finished',
    'trigger.turn.start',
    'client.audio',
    'client.audio',
    'client.audio',
    'client.audio',
    'trigger.turn.end',
  ])
  t.match(messages[1], { reason: 'completed', turn_id: 'assistant-1' }, 'halted playback is reported')
  const bytes = messages.filter((m) => m.type === 'client.audio').map((m) => Buffer.from(String(m.content), 'base64').length)
  t.same(bytes.slice(0, 3), [1600, 1600, 1600])
  t.ok(bytes[3]! > 0 && bytes[3]! < 1600, 'the partial chunk is flushed before trigger.turn.end')
})
