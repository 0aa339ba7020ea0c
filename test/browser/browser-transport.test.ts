import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import WebSocket, { WebSocketServer } from 'ws'
import { silentLogger } from '../../core/log.js'
import { DEFAULT_BROWSER_LIMITS, type BrowserTransportLimits } from '../../transports/browser/browser-limits.js'
import { BrowserTransport } from '../../transports/browser/browser-transport.js'
import { MAX_BROWSER_FRAME_BYTES } from '../../transports/browser/browser-upgrade.js'
import type { EndReason } from '../../core/end-reason.js'
import type { PipelineInput } from '../../pipeline/index.js'
import type { SessionPort } from '../../gateway/sessions/ports/session-port.js'

/** Records every PipelineInput call in order. */
class RecordingInput implements PipelineInput {
  readonly calls: [string, unknown][] = []
  /** Chunk ids the transport reported written to the socket. */
  readonly written: number[] = []
  pushAudio(chunk: Buffer) {
    this.calls.push(['pushAudio', chunk.length])
  }
  clientVad(event: string) {
    this.calls.push(['clientVad', event])
  }
  pushToTalk(pressed: boolean) {
    this.calls.push(['pushToTalk', pressed])
  }
  userText(text: string) {
    this.calls.push(['userText', text])
  }
  userData(data: unknown) {
    this.calls.push(['userData', data])
  }
  dtmf(digit: string) {
    this.calls.push(['dtmf', digit])
  }
  markPlayed(chunkId: number) {
    this.calls.push(['markPlayed', chunkId])
  }
  audioWritten(chunkId: number) {
    this.written.push(chunkId)
  }
  replayFinished(turnId: string) {
    this.calls.push(['replayFinished', turnId])
  }
}

class FakeSession implements SessionPort {
  readonly id = 'ses_test'
  readonly input = new RecordingInput()
  readonly ends: EndReason[] = []
  /** Reasons the transport reported its own socket closing with. */
  readonly closedBy: EndReason[] = []
  constructor(private readonly transport: () => BrowserTransport) {}
  get isEnded() {
    return this.ends.length > 0
  }
  async end(reason: EndReason) {
    this.ends.push(reason)
    if (this.ends.length === 1) this.transport().close(reason)
  }
  async transportClosed(reason: EndReason = 'client_disconnected') {
    this.closedBy.push(reason)
  }
}

interface Rig {
  transport: BrowserTransport
  session: FakeSession
  client: WebSocket
  received: any[]
  clock: { now: number }
  /** Resolves once `n` messages arrived in total. */
  messages(n: number): Promise<any[]>
  /** Sends frames, then a marker round trip proves the server handled them. */
  settle(): Promise<void>
  closed: Promise<{ code: number; reason: string }>
}

async function rig(
  t: { teardown(fn: () => unknown): void },
  opts: {
    limits?: Partial<BrowserTransportLimits>
    before?: (tr: BrowserTransport) => void
    /** Send `client.ready` first, as the SDK does (default true). */
    ready?: boolean
  } = {},
): Promise<Rig> {
  const clock = { now: 1_000_000 }
  const transport = new BrowserTransport(silentLogger(), { ...DEFAULT_BROWSER_LIMITS, ...opts.limits }, () => clock.now)
  const session = new FakeSession(() => transport)
  opts.before?.(transport)
  const server = createServer()
  const wss = new WebSocketServer({ server, maxPayload: MAX_BROWSER_FRAME_BYTES, perMessageDeflate: false })
  wss.on('connection', (ws) => {
    ws.on('error', () => undefined)
    transport.attach(ws, session)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`)
  const received: any[] = []
  const waiters: (() => void)[] = []
  client.on('message', (d) => {
    received.push(JSON.parse(d.toString()))
    for (const w of waiters.splice(0)) w()
  })
  const closed = new Promise<{ code: number; reason: string }>((r) =>
    client.once('close', (code, reason) => r({ code, reason: reason.toString() })),
  )
  await new Promise((r) => client.once('open', r))
  t.teardown(async () => {
    client.terminate()
    for (const c of wss.clients) c.terminate()
    await new Promise((r) => server.close(r))
  })
  const r: Rig = {
    transport,
    session,
    client,
    received,
    clock,
    async messages(n) {
      while (received.length < n) await new Promise<void>((r) => waiters.push(r))
      return received
    },
    async settle() {
      // replay_finished is harmless and answers nothing; the data echo below is what we wait on.
      const marker = `m${Math.random()}`
      client.send(JSON.stringify({ type: 'client.response.data', data: marker }))
      while (!session.input.calls.some(([m, v]) => m === 'userData' && v === marker)) await new Promise((r) => setTimeout(r, 5))
      session.input.calls.splice(
        session.input.calls.findIndex(([m, v]) => m === 'userData' && v === marker),
        1,
      )
    },
    closed,
  }
  if (opts.ready !== false) {
    client.send(JSON.stringify({ type: 'client.ready' }))
    await r.settle()
  }
  return r
}

t.test('declares the SPEC audio formats before any socket exists', async (t) => {
  const tr = new BrowserTransport(silentLogger())
  t.same(tr.audio, { input: 'pcm_8000', output: 'pcm_16000' })
  t.equal(tr.kind, 'browser')
})

t.test('client frames become PipelineInput calls; blank text is ignored', async (t) => {
  const r = await rig(t)
  const send = (m: unknown) => r.client.send(JSON.stringify(m))
  send({ type: 'client.ready' })
  send({ type: 'client.audio', content: Buffer.alloc(1600).toString('base64') })
  send({ type: 'client.audio', content: '' })
  send({ type: 'vad_events', event: 'vad_start' })
  send({ type: 'vad_events', event: 'vad_model_failed' })
  send({ type: 'trigger.turn.start', role: 'user' })
  send({ type: 'trigger.turn.end', role: 'user' })
  send({ type: 'trigger.response.audio.replay_finished', reason: 'completed', turn_id: 'assistant_1' })
  send({ type: 'client.response.text', content: '   ' })
  send({ type: 'client.response.text', content: 'book a table' })
  send({ type: 'client.response.data', data: { cart: 42 } })
  await r.settle()
  t.same(r.session.input.calls, [
    ['pushAudio', 1600],
    ['clientVad', 'vad_start'],
    ['clientVad', 'vad_model_failed'],
    ['pushToTalk', true],
    ['pushToTalk', false],
    ['replayFinished', 'assistant_1'],
    ['userText', 'book a table'],
    ['userData', { cart: 42 }],
  ])
  t.same(r.received, [], 'nothing to answer')
})

t.test('bad frames get an error message and are dropped; the session goes on', async (t) => {
  const r = await rig(t)
  r.client.send('not json')
  r.client.send(JSON.stringify({ type: 'client.dance' }))
  r.client.send(JSON.stringify({ type: 'client.response.text', content: 5 }))
  r.client.send(JSON.stringify({ type: 'client.audio', content: 'AQID' }))
  r.client.send(Buffer.from([1, 2, 3, 4]), { binary: true })
  r.client.send(JSON.stringify({ type: 'client.response.data', data: 'x'.repeat(100_000) }))
  r.client.send(`{"type":"client.response.data","data":${'['.repeat(40)}${']'.repeat(40)}}`)
  r.client.send(JSON.stringify({ type: 'client.response.text', content: 'still here' }))
  const got = await r.messages(7)
  t.same(
    got.map((m) => [m.type, m.code]),
    [
      ['error', 'invalid_json'],
      ['error', 'unknown_message_type'],
      ['error', 'invalid_message'],
      ['error', 'invalid_audio'],
      ['error', 'binary_frame_not_supported'],
      ['error', 'frame_too_large'],
      ['error', 'json_too_deep'],
    ],
  )
  for (const m of got) t.type(m.message, 'string')
  await r.settle()
  t.same(r.session.input.calls, [['userText', 'still here']])
  t.equal(r.client.readyState, WebSocket.OPEN)
})

t.test('a frame above the hard limit closes the socket with 1009', async (t) => {
  const r = await rig(t)
  r.client.send('x'.repeat(MAX_BROWSER_FRAME_BYTES + 1))
  t.equal((await r.closed).code, 1009)
})

t.test('audio faster than real time: 2 s burst, then dropped with one notice, then accepted again', async (t) => {
  const r = await rig(t)
  const chunk = JSON.stringify({ type: 'client.audio', content: Buffer.alloc(1600).toString('base64') }) // 100 ms
  for (let i = 0; i < 30; i++) r.client.send(chunk)
  await r.settle()
  t.equal(r.session.input.calls.length, 20, '2 s accepted at once')
  const notices = await r.messages(1)
  t.same(
    notices.map((m) => m.code),
    ['audio_throttled'],
  )
  // Real time again: 100 ms of clock per 100 ms chunk is accepted.
  for (let i = 0; i < 10; i++) {
    r.clock.now += 100
    r.client.send(chunk)
  }
  await r.settle()
  t.equal(r.session.input.calls.length, 30)
  // Still ahead: more drops in the same episode send no second notice.
  for (let i = 0; i < 5; i++) r.client.send(chunk)
  await r.settle()
  t.equal(r.session.input.calls.length, 30)
  t.equal(r.received.length, 1)
  // After a pause long enough to refill the bucket, a new episode gets a new notice.
  r.clock.now += 5_000
  for (let i = 0; i < 25; i++) r.client.send(chunk)
  await r.messages(2)
  t.same(
    r.received.map((m) => m.code),
    ['audio_throttled', 'audio_throttled'],
  )
  t.equal(r.session.input.calls.length, 50)
})

t.test('a flood of tiny audio frames is throttled too', async (t) => {
  const r = await rig(t)
  const tiny = JSON.stringify({ type: 'client.audio', content: 'AAA=' })
  for (let i = 0; i < 1000; i++) r.client.send(tiny)
  await r.settle()
  t.equal(r.session.input.calls.length, 400, '5 ms floor per frame: 2000 / 5')
})

t.test('non-audio messages are rate limited and error replies are bounded', async (t) => {
  // Output flows at once without a client.ready, which would take one of the five messages.
  const r = await rig(t, {
    ready: false,
    limits: { messageBurst: 5, messagesPerSecond: 1, errorBurst: 3, errorsPerSecond: 0.001, readyTimeoutMs: 0 },
  })
  for (let i = 0; i < 10; i++) r.client.send(JSON.stringify({ type: 'client.response.text', content: `t${i}` }))
  await new Promise((res) => setTimeout(res, 100))
  t.same(
    r.session.input.calls.map(([, v]) => v),
    ['t0', 't1', 't2', 't3', 't4'],
  )
  t.same(
    r.received.map((m) => m.code),
    ['rate_limited', 'rate_limited', 'rate_limited'],
    'at most errorBurst errors',
  )
  for (let i = 0; i < 50; i++) r.client.send('garbage')
  await new Promise((res) => setTimeout(res, 100))
  t.equal(r.received.length, 3, 'a flood of bad frames gets silence, not an echo')
})

t.test('events delivered before the socket attaches are sent first, in order', async (t) => {
  const r = await rig(t, {
    before(tr) {
      tr.deliver({ type: 'turn.start', role: 'assistant', turnId: 'a1' })
      tr.deliver({ type: 'audio', turnId: 'a1', chunkId: 0, audio: Buffer.alloc(320), durationMs: 10 })
      tr.deliver({ type: 'assistant.text', turnId: 'a1', content: 'Hello' })
    },
  })
  const got = await r.messages(3)
  t.same(
    got.map((m) => m.type),
    ['turn.start', 'response.audio', 'response.text'],
  )
  t.equal(Buffer.from(got[1].content, 'base64').length, 320)
})

t.test('clear_playback before attach drops queued audio only; nothing on the wire', async (t) => {
  const r = await rig(t, {
    before(tr) {
      tr.deliver({ type: 'turn.start', role: 'assistant', turnId: 'a1' })
      tr.deliver({ type: 'audio', turnId: 'a1', chunkId: 0, audio: Buffer.alloc(320), durationMs: 10 })
      tr.deliver({ type: 'turn.start', role: 'user', turnId: 'u1' })
      tr.deliver({ type: 'clear_playback', turnId: 'a1' })
    },
  })
  r.transport.deliver({ type: 'clear_playback', turnId: 'a1' })
  r.transport.deliver({ type: 'response.end', turnId: 'a1' })
  const got = await r.messages(3)
  t.same(
    got.map((m) => [m.type, m.role]),
    [
      ['turn.start', 'assistant'],
      ['turn.start', 'user'],
      ['response.end', undefined],
    ],
  )
})

t.test('pause_playback holds back audio not sent yet; resume sends it in order, a clear drops it', async (t) => {
  const r = await rig(t)
  const audio = (chunkId: number) => ({ type: 'audio' as const, turnId: 'a1', chunkId, audio: Buffer.alloc(320, chunkId), durationMs: 10 })
  r.transport.deliver({ type: 'turn.start', role: 'assistant', turnId: 'a1' })
  r.transport.deliver(audio(1))
  r.transport.deliver({ type: 'pause_playback', turnId: 'a1' })
  r.transport.deliver(audio(2))
  r.transport.deliver({ type: 'assistant.text.delta', turnId: 'a1', content: 'Hello' })
  await r.messages(3)
  await r.settle()
  t.same(
    r.received.map((m) => m.type),
    ['turn.start', 'response.audio', 'response.text.delta'],
    'paused: audio waits, other messages do not',
  )
  r.transport.deliver(audio(3))
  r.transport.deliver({ type: 'resume_playback', turnId: 'a1' })
  const got = await r.messages(5)
  t.same(
    got.slice(3).map((m) => Buffer.from(m.content, 'base64')[0]),
    [2, 3],
    'resumed: the held audio in order',
  )
  r.transport.deliver({ type: 'pause_playback', turnId: 'a1' })
  r.transport.deliver(audio(4))
  r.transport.deliver({ type: 'clear_playback', turnId: 'a1' })
  r.transport.deliver({ type: 'resume_playback', turnId: 'a1' })
  r.transport.deliver({ type: 'response.end', turnId: 'a1' })
  const all = await r.messages(6)
  t.same(
    all.slice(5).map((m) => m.type),
    ['response.end'],
    'a barge-in drops what the pause held',
  )
})

t.test('hangup ends the session; the socket closes after what was sent', async (t) => {
  const r = await rig(t)
  r.transport.deliver({ type: 'assistant.text', turnId: 'a1', content: 'Goodbye' })
  r.transport.deliver({ type: 'audio', turnId: 'a1', chunkId: 1, audio: Buffer.alloc(32_000), durationMs: 1000 })
  r.transport.deliver({ type: 'hangup', reason: 'agent_hangup' })
  const c = await r.closed
  t.same(c, { code: 1000, reason: 'hangup' })
  t.same(r.session.ends, ['hangup'])
  t.same(
    r.received.map((m) => m.type),
    ['response.text', 'response.audio'],
  )
  r.transport.deliver({ type: 'assistant.text', turnId: 'a1', content: 'ignored' })
  r.transport.close('hangup')
})

t.test('the browser closing its socket tells the session once, as client_disconnected', async (t) => {
  const r = await rig(t)
  t.same(r.session.closedBy, [])
  r.client.close(1000, 'bye')
  await r.closed
  while (r.session.closedBy.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  t.same(r.session.closedBy, ['client_disconnected'])
  t.same(r.session.ends, [], 'the transport does not end the session a second way')
})

t.test('a pipeline error hangup ends the session with error; shutdown closes with 1001', async (t) => {
  const r = await rig(t)
  r.transport.deliver({ type: 'hangup', reason: 'pipeline_error' })
  t.same(await r.closed, { code: 1000, reason: 'error' })
  t.same(r.session.ends, ['error'])
  const r2 = await rig(t)
  r2.transport.close('shutdown')
  t.same(await r2.closed, { code: 1001, reason: 'shutdown' })
})

t.test('a client that stops reading: assistant audio beyond the buffer limit is dropped, control messages are not', async (t) => {
  const r = await rig(t, { limits: { maxBufferedBytes: 256 * 1024 } })
  const raw = (r.client as unknown as { _socket: { pause(): void; resume(): void } })._socket
  raw.pause()
  const audio = Buffer.alloc(32_000) // 1 s
  for (let i = 0; i < 400; i++) r.transport.deliver({ type: 'audio', turnId: 'a1', chunkId: i, audio, durationMs: 1000 })
  r.transport.deliver({ type: 'response.end', turnId: 'a1' })
  raw.resume()
  const deadline = Date.now() + 10_000
  while (!r.received.some((m) => m.type === 'response.end') && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20))
  const audioCount = r.received.filter((m) => m.type === 'response.audio').length
  t.ok(audioCount < 400, `some audio dropped (${audioCount} of 400 sent)`)
  t.ok(audioCount > 0)
  t.equal(r.session.input.written.length, audioCount, 'only the chunks written are reported, not the dropped ones')
  t.equal(r.received.at(-1).type, 'response.end', 'the control message still arrives')
})

t.test('output waits for client.ready, in order; then flows straight through', async (t) => {
  const r = await rig(t, {
    ready: false,
    limits: { readyTimeoutMs: 60_000 },
    before(tr) {
      tr.deliver({ type: 'turn.start', role: 'assistant', turnId: 'a1' })
      tr.deliver({ type: 'audio', turnId: 'a1', chunkId: 1, audio: Buffer.alloc(320), durationMs: 10 })
    },
  })
  r.transport.deliver({ type: 'audio', turnId: 'a1', chunkId: 2, audio: Buffer.alloc(320), durationMs: 10 })
  await r.settle()
  t.same(r.received, [], 'nothing before client.ready')
  t.same(r.session.input.written, [], 'held audio is not reported written')
  r.client.send(JSON.stringify({ type: 'client.ready' }))
  await r.messages(3)
  t.same(r.session.input.written, [1, 2], 'each chunk is reported written when it goes to the socket')
  r.transport.deliver({ type: 'response.end', turnId: 'a1' })
  const got = await r.messages(4)
  t.same(
    got.map((m) => [m.type, m.delta_id]),
    [
      ['turn.start', undefined],
      ['response.audio', 'a1:1'],
      ['response.audio', 'a1:2'],
      ['response.end', undefined],
    ],
  )
})

t.test('without client.ready, output is sent after readyTimeoutMs; a hangup sends what was held first', async (t) => {
  const r = await rig(t, { ready: false, limits: { readyTimeoutMs: 150 } })
  const since = Date.now()
  r.transport.deliver({ type: 'audio', turnId: 'a1', chunkId: 1, audio: Buffer.alloc(320), durationMs: 10 })
  await r.messages(1)
  t.ok(Date.now() - since >= 100, 'held until the bound')
  const r2 = await rig(t, { ready: false, limits: { readyTimeoutMs: 60_000 } })
  r2.transport.deliver({ type: 'audio', turnId: 'a1', chunkId: 1, audio: Buffer.alloc(320), durationMs: 10 })
  r2.transport.deliver({ type: 'hangup', reason: 'agent_hangup' })
  t.same(await r2.closed, { code: 1000, reason: 'hangup' })
  t.same(
    r2.received.map((m) => m.type),
    ['response.audio'],
  )
})
