import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { WebSocketServer, type WebSocket } from 'ws'
import { carrierSignatureOf } from '../../carrier/carrier.js'
import type { CarrierInbound } from '../../carrier/carrier-stream-events.js'
import { connectStreamMarkup, sayAndHangupMarkup, streamUrl } from '../../carrier/twilio/markup.js'
import { TwilioMediaCodec } from '../../carrier/twilio/media-codec.js'
import { TwilioSignatureVerifier, expectedUrl, parseFormBody } from '../../carrier/twilio/signature.js'
import { placeCall } from '../fakes/carrier/phone-simulator.js'

const TOKEN = 'sim-token'
const codec = new TwilioMediaCodec()
const verifier = new TwilioSignatureVerifier()

interface StreamSide {
  readonly ws: WebSocket
  readonly inbound: { at: number; event: CarrierInbound | null }[]
  streamSid: string
  readonly started: Promise<void>
}

/** A tiny gateway stand-in: a signed voice hook and a media stream endpoint. */
async function startGateway(t: Test, answer: 'connect' | 'refuse' = 'connect') {
  const streams: StreamSide[] = []
  let onStream: (s: StreamSide) => void = () => undefined
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const form = parseFormBody(Buffer.concat(chunks))
    const url = expectedUrl(publicUrl, req.url ?? '/')
    const check = verifier.verify(
      { url, signature: carrierSignatureOf(verifier, (name) => req.headers[name] as string | undefined), params: form },
      TOKEN,
    )
    if (!check.ok) {
      res.writeHead(403).end(check.reason)
      return
    }
    res.writeHead(200, { 'content-type': 'text/xml' })
    res.end(
      answer === 'refuse'
        ? sayAndHangupMarkup('This number is not in service.')
        : connectStreamMarkup(streamUrl(publicUrl, 'key-1'), { from: String(form.From) }),
    )
  })
  const wss = new WebSocketServer({ server, path: '/v1/agents/carrier/websocket/key-1' })
  wss.on('connection', (ws) => {
    let started: () => void = () => undefined
    const side: StreamSide = { ws, inbound: [], streamSid: '', started: new Promise((r) => (started = r)) }
    ws.on('message', (data) => {
      const event = codec.decode(data.toString())
      side.inbound.push({ at: performance.now(), event })
      if (event?.kind === 'start') {
        side.streamSid = event.streamSid
        started()
      }
    })
    streams.push(side)
    onStream(side)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const publicUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  t.teardown(async () => {
    for (const c of wss.clients) c.terminate()
    wss.close()
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
  })
  return {
    publicUrl,
    hook: `${publicUrl}/v1/agents/carrier/twiml`,
    nextStream: () => new Promise<StreamSide>((resolve) => (onStream = resolve)),
    streams,
  }
}

async function connect(t: Test, options: Partial<Parameters<typeof placeCall>[0]> = {}) {
  const gw = await startGateway(t)
  const streamP = gw.nextStream()
  const result = await placeCall({ voiceHookUrl: gw.hook, authToken: TOKEN, from: '+15550001111', to: '+15550002222', ...options })
  if (result.outcome !== 'connected') throw new Error(`not connected: ${result.outcome}`)
  const side = await streamP
  await side.started
  t.teardown(() => result.call.hangup())
  return { gw, call: result.call, side, result }
}

/** Poll a server-side condition (the phone's waitFor only sees the phone's own events). */
async function until(predicate: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

const events = (side: StreamSide, kind: string) => side.inbound.filter((e) => e.event?.kind === kind)

t.test('voice hook is signed; connected + start sent as the carrier does', async (t) => {
  const { call, side, result } = await connect(t, { realtime: false, fromCountry: 'US' })
  if (result.outcome !== 'connected') return
  t.same(result.verbs[0], { verb: 'Connect', stream: { url: call.streamUrl, parameters: { from: '+15550001111' } } })
  t.equal(side.inbound[0]?.event?.kind, 'connected')
  const start = side.inbound[1]?.event
  t.match(start, {
    kind: 'start',
    sequenceNumber: 1,
    streamSid: /^MZ[0-9a-f]{32}$/,
    callSid: /^CA[0-9a-f]{32}$/,
    tracks: ['inbound'],
    customParameters: { from: '+15550001111' },
    mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
  })
})

t.test('refusals return the said text; a bad signature is an HTTP error', async (t) => {
  const gw = await startGateway(t, 'refuse')
  const refused = await placeCall({ voiceHookUrl: gw.hook, authToken: TOKEN, from: '+1555', to: '+1666' })
  t.match(refused, { outcome: 'refused', said: 'This number is not in service.' })
  const forged = await placeCall({ voiceHookUrl: gw.hook, authToken: 'wrong', from: '+1555', to: '+1666' })
  t.match(forged, { outcome: 'http_error', status: 403, body: 'bad_signature' })
  const unsigned = await placeCall({ voiceHookUrl: gw.hook, from: '+1555', to: '+1666' })
  t.match(unsigned, { outcome: 'http_error', status: 403, body: 'missing_signature' })
})

t.test('caller audio: 160-byte frames, string counters, real-time pacing without drift', async (t) => {
  const audio = Buffer.alloc(8000 + 100, 0x11) // 1 s + a partial frame
  const { side } = await connect(t, { realtime: true, silenceWhenIdle: false, audio })
  await t.resolves(until(() => events(side, 'media').length >= 51, 3000))
  const media = events(side, 'media')
  t.equal(media.length, 51, 'partial last frame padded')
  const first = media[0]
  const last = media[50]
  const span = (last?.at ?? 0) - (first?.at ?? 0)
  t.ok(span > 950 && span < 1250, `50 intervals took ${span.toFixed(0)} ms (expect ~1000)`)
  t.match(last?.event, { kind: 'media', chunk: 51, timestamp: 1000, track: 'inbound' })
  const lastPayload = (last?.event as Extract<CarrierInbound, { kind: 'media' }> | undefined)?.payload ?? Buffer.alloc(0)
  t.equal(lastPayload.length, 160)
  t.equal(lastPayload[99], 0x11)
  t.equal(lastPayload[100], 0xff, 'padding is mu-law silence')
  const seqs = side.inbound.slice(1).map((e) => (e.event as { sequenceNumber: number }).sequenceNumber)
  t.same(
    seqs,
    seqs.map((_, i) => i + 1),
    'sequence numbers count up from start',
  )
})

t.test('non-real-time mode is fast; dtmf and hangup', async (t) => {
  const { call, side } = await connect(t, { realtime: false, audio: Buffer.alloc(160 * 200, 0x22) })
  await until(() => events(side, 'media').length === 200, 2000)
  call.sendDtmf('#')
  const end = await call.hangup()
  t.equal(end.by, 'caller')
  await new Promise((r) => setTimeout(r, 20))
  t.match(events(side, 'dtmf')[0]?.event, { kind: 'dtmf', digit: '#', track: 'inbound_track' })
  t.match(side.inbound.at(-1)?.event, { kind: 'stop', callSid: call.callSid, accountSid: call.accountSid })
})

t.test('marks echo after the audio before them has played', async (t) => {
  const { call, side } = await connect(t, { realtime: false, playbackSpeed: 1 })
  const sid = side.streamSid
  side.ws.send(codec.encodeMedia(sid, Buffer.alloc(1600, 0x33))) // 200 ms
  side.ws.send(codec.encodeMark(sid, 'm1'))
  side.ws.send(codec.encodeMedia(sid, Buffer.alloc(800, 0x44))) // +100 ms
  side.ws.send(codec.encodeMark(sid, 'm2'))
  const sentAt = performance.now()
  await until(() => events(side, 'mark').length === 2, 2000)
  const [m1, m2] = events(side, 'mark')
  t.match(m1?.event, { kind: 'mark', name: 'm1', streamSid: sid })
  t.match(m2?.event, { kind: 'mark', name: 'm2' })
  const d1 = (m1?.at ?? 0) - sentAt
  const d2 = (m2?.at ?? 0) - sentAt
  t.ok(d1 >= 180 && d1 < 500, `m1 echoed after ${d1.toFixed(0)} ms (~200)`)
  t.ok(d2 >= 280 && d2 < 600, `m2 echoed after ${d2.toFixed(0)} ms (~300)`)
  t.equal(call.receivedAudio().length, 2400)
  t.equal(call.playedAudio().length, 2400)
  t.same(
    call.marks.map((m) => [m.name, m.cleared]),
    [
      ['m1', false],
      ['m2', false],
    ],
  )
  t.same(call.errors, [])
})

t.test('clear drops unplayed audio and echoes pending marks at once', async (t) => {
  const { call, side } = await connect(t, { realtime: false, playbackSpeed: 1 })
  const sid = side.streamSid
  side.ws.send(codec.encodeMedia(sid, Buffer.alloc(8000, 0x55))) // 1 s
  side.ws.send(codec.encodeMark(sid, 'long'))
  side.ws.send(codec.encodeMedia(sid, Buffer.alloc(800, 0x66)))
  side.ws.send(codec.encodeMark(sid, 'tail'))
  await new Promise((r) => setTimeout(r, 150))
  const clearAt = performance.now()
  side.ws.send(codec.encodeClear(sid))
  await until(() => events(side, 'mark').length === 2, 1000)
  const marks = events(side, 'mark')
  t.same(
    marks.map((m) => (m.event as { name: string }).name),
    ['long', 'tail'],
    'in order',
  )
  for (const m of marks) t.ok(m.at - clearAt < 100, `echoed ${(m.at - clearAt).toFixed(0)} ms after clear`)
  t.same(
    call.marks.map((m) => m.cleared),
    [true, true],
  )
  const [clear] = call.clears
  t.same(clear?.releasedMarks, ['long', 'tail'])
  const played = call.playedAudio().length
  t.ok(played > 900 && played < 2000, `played ${played} bytes before the clear (~1200)`)
  t.equal(played + (clear?.droppedBytes ?? 0), 8800)
  t.equal(call.receivedAudio().length, 8800)

  // Audio after a clear plays from now, and its mark waits for it.
  side.ws.send(codec.encodeMedia(sid, Buffer.alloc(400, 0x77))) // 50 ms
  side.ws.send(codec.encodeMark(sid, 'after'))
  await until(() => events(side, 'mark').length === 3, 1000)
  t.same(call.marks.at(-1)?.cleared, false)
})

t.test('instant earpiece (default without real time) echoes marks at once', async (t) => {
  const { call, side } = await connect(t, { realtime: false })
  side.ws.send(codec.encodeMedia(side.streamSid, Buffer.alloc(80_000, 0x12))) // 10 s
  side.ws.send(codec.encodeMark(side.streamSid, 'fast'))
  await until(() => events(side, 'mark').length === 1, 500)
  t.equal(call.playedAudio().length, 80_000)
})

t.test('protocol violations are recorded; the server closing ends the call', async (t) => {
  const { call, side } = await connect(t, { realtime: true })
  side.ws.send(Buffer.from([1, 2, 3]), { binary: true })
  side.ws.send(JSON.stringify({ event: 'media', streamSid: 'MZwrong', media: { payload: '//8=' } }))
  side.ws.send('not json')
  await call.waitFor(() => call.errors.length >= 3, 1000)
  t.match(call.errors, [/binary/, /wrong streamSid/, /not JSON/])
  side.ws.close(1000, 'session over')
  const end = await call.ended
  t.match(end, { by: 'server', code: 1000, reason: 'session over' })
  t.notOk(call.isOpen)
  const framesAtClose = call.framesSent
  await new Promise((r) => setTimeout(r, 60))
  t.equal(call.framesSent, framesAtClose, 'no audio after the call ended')
  t.ok(framesAtClose > 0, 'a real-time phone sends silence while idle')
})
