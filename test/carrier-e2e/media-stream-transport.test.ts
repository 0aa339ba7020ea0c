import t, { type Test } from 'tap'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import WebSocket, { WebSocketServer } from 'ws'
import { TwilioMediaCodec } from '../../carrier/twilio/media-codec.js'
import { MediaStreamTransport } from '../../transports/media-stream/media-stream-transport.js'
import { PLAY_DELAY_MS, UnheardAudio } from '../../transports/media-stream/unheard-audio.js'
import type { EndReason } from '../../core/end-reason.js'
import type { PipelineInput } from '../../pipeline/index.js'
import { silentLogger } from '../../core/log.js'
import type { SessionPort } from '../../gateway/sessions/ports/session-port.js'

const SID = `MZ${'a'.repeat(32)}`

class FakeSession implements SessionPort {
  readonly id = 'sess_test'
  calls: [string, unknown][] = []
  /** Chunk ids the transport reported written to the socket. */
  written: number[] = []
  ends: EndReason[] = []
  closedBy: EndReason[] = []
  readonly input: PipelineInput = {
    pushAudio: (b) => void this.calls.push(['pushAudio', b.length]),
    clientVad: () => undefined,
    pushToTalk: () => undefined,
    userText: () => undefined,
    userData: () => undefined,
    dtmf: (d) => void this.calls.push(['dtmf', d]),
    markPlayed: (n) => void this.calls.push(['markPlayed', n]),
    audioWritten: (n) => void this.written.push(n),
    replayFinished: () => undefined,
  }
  get isEnded() {
    return this.ends.length + this.closedBy.length > 0
  }
  async end(reason: EndReason) {
    this.ends.push(reason)
  }
  async transportClosed(reason: EndReason = 'client_disconnected') {
    this.closedBy.push(reason)
  }
}

async function pair(t: Test, opts: { maxBufferedBytes?: number } = {}) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  await once(wss, 'listening')
  const serverSide = once(wss, 'connection') as Promise<[WebSocket]>
  const phone = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`)
  await once(phone, 'open')
  const [ws] = await serverSide
  const session = new FakeSession()
  const transport = new MediaStreamTransport({ codec: new TwilioMediaCodec(), log: silentLogger(), ...opts })
  transport.attach(ws, session)
  const received: any[] = []
  phone.on('message', (d) => received.push(JSON.parse(d.toString())))
  t.teardown(() => {
    phone.terminate()
    wss.close()
  })
  const send = (m: unknown) => phone.send(typeof m === 'string' ? m : JSON.stringify(m))
  const start = () =>
    send({
      event: 'start',
      sequenceNumber: '1',
      streamSid: SID,
      start: {
        streamSid: SID,
        accountSid: 'AC1',
        callSid: 'CA1',
        tracks: ['inbound'],
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    })
  const until = async (pred: () => boolean) => {
    for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 5))
    if (!pred()) throw new Error('condition never held')
  }
  return { phone, ws, session, transport, received, send, start, until }
}

const media = (payload: Buffer, sid = SID) => ({
  event: 'media',
  sequenceNumber: '2',
  streamSid: sid,
  media: { track: 'inbound', chunk: '1', timestamp: '0', payload: payload.toString('base64') },
})

t.test('inbound frames become pipeline input; junk is ignored and the call goes on', async (t) => {
  const p = await pair(t)
  p.send({ event: 'connected', protocol: 'Call', version: '1.0.0' })
  p.send(media(Buffer.alloc(160, 1)))
  p.start()
  p.phone.send(Buffer.from([1, 2, 3]))
  p.send('not json')
  p.send({ event: 'surprise', streamSid: SID })
  p.send(media(Buffer.alloc(160, 1), 'MZother'))
  p.send(media(Buffer.alloc(160, 2)))
  p.send({ event: 'dtmf', streamSid: SID, sequenceNumber: '3', dtmf: { track: 'inbound_track', digit: '5' } })
  await p.until(() => p.session.calls.length >= 2)
  t.same(
    p.session.calls,
    [
      ['pushAudio', 160],
      ['dtmf', '5'],
    ],
    'media before start, binary, bad JSON, unknown events and other streams ignored',
  )
  t.equal(p.transport.streamSid, SID)
  p.send({ event: 'stop', sequenceNumber: '4', streamSid: SID, stop: { accountSid: 'AC1', callSid: 'CA1' } })
  await once(p.phone, 'close')
  t.same(p.session.closedBy.slice(0, 1), ['caller_hangup'])
})

t.test('assistant audio goes out as media then a mark; echoes report what was heard', async (t) => {
  const p = await pair(t)
  // Events before start are held until the stream id is known.
  p.transport.deliver({ type: 'audio', turnId: 'a1', chunkId: 1, audio: Buffer.alloc(320, 7), durationMs: 40 })
  p.transport.deliver({ type: 'assistant.text', turnId: 'a1', content: 'ignored' })
  p.start()
  await p.until(() => p.received.length >= 2)
  p.transport.deliver({ type: 'audio', turnId: 'a1', chunkId: 2, audio: Buffer.alloc(20_000, 7), durationMs: 2500 })
  await p.until(() => p.received.length >= 6)
  t.same(
    p.received.map((m) => m.event),
    ['media', 'mark', 'media', 'media', 'media', 'mark'],
    'a long chunk is split into several media frames, one mark after it',
  )
  t.ok(p.received.every((m) => m.streamSid === SID))
  t.equal(Buffer.from(p.received[0].media.payload, 'base64').length, 320, 'mu-law passed through as is')
  t.same([p.received[1].mark.name, p.received[5].mark.name], ['1', '2'])
  t.same(p.session.written, [1, 2], 'each chunk is reported written once its frames went out (the held one after start)')
  p.send({ event: 'mark', streamSid: SID, sequenceNumber: '5', mark: { name: '2' } })
  await p.until(() => p.session.calls.length >= 1)
  t.same(p.session.calls, [['markPlayed', 2]], 'an echo covers every earlier mark')
})

t.test('clear_playback sends clear; marks it released do not count as heard', async (t) => {
  const p = await pair(t)
  p.start()
  await p.until(() => p.transport.streamSid !== undefined)
  p.transport.deliver({ type: 'audio', turnId: 'a1', chunkId: 7, audio: Buffer.alloc(160, 7), durationMs: 20 })
  p.transport.deliver({ type: 'clear_playback', turnId: 'a1' })
  await p.until(() => p.received.length >= 3)
  t.same(
    p.received.map((m) => m.event),
    ['media', 'mark', 'clear'],
  )
  // The carrier echoes pending marks right after a clear.
  p.send({ event: 'mark', streamSid: SID, sequenceNumber: '5', mark: { name: '7' } })
  p.transport.deliver({ type: 'audio', turnId: 'a2', chunkId: 8, audio: Buffer.alloc(160, 7), durationMs: 20 })
  p.send({ event: 'mark', streamSid: SID, sequenceNumber: '6', mark: { name: '8' } })
  await p.until(() => p.session.calls.length >= 1)
  t.same(p.session.calls, [['markPlayed', 8]])
})

t.test('pause_playback clears the carrier and holds; resume sends what was not heard, under new mark names', async (t) => {
  const p = await pair(t)
  p.start()
  await p.until(() => p.transport.streamSid !== undefined)
  p.transport.deliver({ type: 'audio', turnId: 'a1', chunkId: 7, audio: Buffer.alloc(1600, 7), durationMs: 200 })
  p.transport.deliver({ type: 'pause_playback', turnId: 'a1' })
  p.transport.deliver({ type: 'audio', turnId: 'a1', chunkId: 8, audio: Buffer.alloc(160, 8), durationMs: 20 })
  await p.until(() => p.received.length >= 3)
  // The carrier echoes the pending mark right after the clear: it proves nothing.
  p.send({ event: 'mark', streamSid: SID, sequenceNumber: '5', mark: { name: '7' } })
  await new Promise((r) => setTimeout(r, 30))
  t.same(
    p.received.map((m) => m.event),
    ['media', 'mark', 'clear'],
    'paused: the buffer is cleared and audio that comes meanwhile waits',
  )
  t.same(p.session.calls, [], 'the echo the clear released is not taken as heard')
  p.transport.deliver({ type: 'resume_playback', turnId: 'a1' })
  await p.until(() => p.received.length >= 7)
  t.same(
    p.received.slice(3).map((m) => (m.event === 'mark' ? m.mark.name : Buffer.from(m.media.payload, 'base64').length)),
    [1600, '7.1', 160, '8'],
    'resumed: the unheard chunk again (none of it had played), marked anew, then the held one',
  )
  p.send({ event: 'mark', streamSid: SID, sequenceNumber: '6', mark: { name: '7.1' } })
  await p.until(() => p.session.calls.length >= 1)
  t.same(p.session.calls, [['markPlayed', 7]], 'the new mark reports the chunk heard')
  t.same(p.session.written, [7, 8], 'each chunk reported written once')

  p.transport.deliver({ type: 'pause_playback', turnId: 'a1' })
  p.transport.deliver({ type: 'clear_playback', turnId: 'a1' })
  p.transport.deliver({ type: 'resume_playback', turnId: 'a1' })
  await p.until(() => p.received.length >= 9)
  await new Promise((r) => setTimeout(r, 30))
  t.same(
    p.received.slice(7).map((m) => m.event),
    ['clear', 'clear'],
    'a barge-in after the pause drops what was held: nothing to resume',
  )
})

t.test('what a pause sends again: the chunk playing from the frame it reached, nothing already heard', async (t) => {
  const u = new UnheardAudio(10)
  const bytes = (ms: number) => Buffer.alloc(ms * 8)
  u.written(1, bytes(200), 0)
  u.written(2, bytes(200), 0)
  u.written(3, bytes(200), 0)
  u.heard(1, 300)
  // Chunk 2 began playing at the echo of 1 (300 ms); 130 ms later it is in its 7th frame.
  const paused = u.takeUnplayed(430)
  t.same(
    paused.unplayed.map((c) => [c.chunkId, c.audio.length]),
    [
      [2, (200 - 120) * 8],
      [3, 200 * 8],
    ],
    'chunk 2 from its 7th frame (cut back to the frame), chunk 3 whole',
  )
  t.equal(paused.playedThrough, undefined)
  t.same(u.takeUnplayed(1000).unplayed, [], 'everything is forgotten once taken')

  u.written(4, bytes(100), 1000)
  u.written(5, bytes(100), 1000)
  const later = u.takeUnplayed(1000 + PLAY_DELAY_MS + 150)
  t.same(
    later.unplayed.map((c) => [c.chunkId, c.audio.length]),
    [[5, (100 - 40) * 8]],
    'no echo yet: played from the write plus the carrier delay, chunk by chunk (50 ms of 5: two whole frames)',
  )
  t.equal(later.playedThrough, 4, 'the chunk played in full without its echo is reported')
})

t.test('hangup closes the stream and ends the session', async (t) => {
  const p = await pair(t)
  p.start()
  const closed = once(p.phone, 'close')
  p.transport.deliver({ type: 'hangup', reason: 'agent_hangup' })
  const [code] = (await closed) as [number]
  t.equal(code, 1000)
  t.same(p.session.ends, ['hangup'])
})

t.test('a backed-up socket drops audio but keeps the marks flowing', async (t) => {
  const p = await pair(t, { maxBufferedBytes: -1 })
  p.start()
  p.transport.deliver({ type: 'audio', turnId: 'a1', chunkId: 3, audio: Buffer.alloc(160, 7), durationMs: 20 })
  await p.until(() => p.received.length >= 1)
  t.same(
    p.received.map((m) => m.event),
    ['mark'],
  )
  t.equal(p.transport.droppedBytes, 160)
  t.same(p.session.written, [], 'dropped audio is not reported as written')
})

t.test('close(reason) closes the socket; shutdown says going away', async (t) => {
  const p = await pair(t)
  const closed = once(p.phone, 'close')
  p.transport.close('shutdown')
  const [code, reason] = (await closed) as [number, Buffer]
  t.equal(code, 1001)
  t.equal(reason.toString(), 'shutdown')
})
