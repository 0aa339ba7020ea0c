import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { WebSocketServer, type WebSocket } from 'ws'
import { carrierSignatureOf, type CarrierCallStatus, type CarrierStatusUpdate } from '../../carrier/carrier.js'
import { createTwilioCarrier } from '../../carrier/twilio/twilio-carrier.js'
import { expectedUrl, parseFormBody } from '../../carrier/twilio/signature.js'
import { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'

const carrier = createTwilioCarrier({ baseDelayMs: 5 })

/** Gateway stand-in: status callbacks, voice hook and media stream, all checking signatures. */
async function startGateway(t: Test, authToken: () => string, onStream: (ws: WebSocket, streamSid: string) => void) {
  const statuses: { update: CarrierStatusUpdate; stored: CarrierCallStatus }[] = []
  const hooks: Record<string, string | string[]>[] = []
  const badSignatures: string[] = []
  let stored: CarrierCallStatus | undefined
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const params = parseFormBody(Buffer.concat(chunks))
    const signature = carrierSignatureOf(carrier.verifier, (name) => req.headers[name] as string | undefined)
    const check = carrier.verifier.verify({ url: expectedUrl(publicUrl, req.url ?? '/'), signature, params }, authToken())
    if (!check.ok) {
      badSignatures.push(`${req.url}: ${check.reason}`)
      res.writeHead(403).end()
      return
    }
    if (req.url === '/v1/agents/carrier/status') {
      const parsed = carrier.parseStatusCallback(params)
      if (parsed.ok) {
        stored = carrier.nextStatus(stored, parsed.update.status)
        statuses.push({ update: parsed.update, stored })
      }
      res.writeHead(204).end()
      return
    }
    hooks.push(params)
    res.writeHead(200, { 'content-type': carrier.markup.contentType })
    res.end(carrier.markup.connectStream(carrier.mediaStream.streamUrl(publicUrl, 'k1')))
  })
  const wss = new WebSocketServer({ server, path: '/v1/agents/carrier/websocket/k1' })
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const event = carrier.newCodec().decode(data.toString())
      if (event?.kind === 'start') onStream(ws, event.streamSid)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const publicUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  t.teardown(async () => {
    for (const c of wss.clients) c.terminate()
    wss.close()
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
  })
  return { publicUrl, statuses, hooks, badSignatures }
}

async function setup(t: Test, onStream: (ws: WebSocket, streamSid: string) => void = () => undefined) {
  const api = await FakeCallsApi.start({ stepMs: 5 })
  const gw = await startGateway(t, () => api.authToken, onStream)
  t.teardown(() => api.close())
  const client = carrier.callsClient({ accountSid: api.accountSid, authToken: api.authToken, apiBaseUrl: api.baseUrl })
  const place = () =>
    client.createCall({
      to: '+15550002222',
      from: '+15550001111',
      url: `${gw.publicUrl}/v1/agents/carrier/twiml`,
      statusCallback: `${gw.publicUrl}/v1/agents/carrier/status`,
      timeoutSec: 20,
    })
  return { api, gw, client, place }
}

t.test('answered call: signed callbacks, voice hook, media stream, completed', async (t) => {
  const { api, gw, place } = await setup(t, (ws, streamSid) => {
    ws.send(carrier.newCodec().encodeMedia(streamSid, Buffer.alloc(160, 0xff)))
    ws.send(carrier.newCodec().encodeMark(streamSid, 'bye'))
    ws.on('message', (data) => {
      if (carrier.newCodec().decode(data.toString())?.kind === 'mark') ws.close(1000, 'agent hung up')
    })
  })
  api.outcome = { kind: 'answer', audio: Buffer.alloc(1600, 0x10), realtime: false }
  const created = await place()
  const fake = api.calls.get(created.sid)
  t.ok(fake)
  t.equal(await fake?.done, 'completed')
  t.same(gw.badSignatures, [])
  t.same(
    gw.statuses.map((s) => s.update.status),
    ['initiated', 'ringing', 'in-progress', 'completed'],
  )
  t.same(
    gw.statuses.map((s) => s.stored),
    ['initiated', 'ringing', 'in-progress', 'completed'],
  )
  const final = gw.statuses.at(-1)?.update
  t.match(final, { callSid: created.sid, direction: 'outbound-api', from: '+15550001111', to: '+15550002222' })
  t.equal(typeof final?.callDurationSec, 'number')
  t.match(gw.hooks[0], { CallSid: created.sid, Direction: 'outbound-api', From: '+15550001111', To: '+15550002222' })
  const phone = fake?.phone
  t.equal(phone?.outcome, 'connected')
  if (phone?.outcome === 'connected') {
    t.match(await phone.call.ended, { by: 'server', reason: 'agent hung up' })
    t.equal(phone.call.receivedAudio().length, 160)
  }
  t.ok(fake?.callbacks.every((c) => c.reply === 204))
})

t.test('busy, no-answer and failed end without a voice hook', async (t) => {
  const { api, gw, place } = await setup(t)
  for (const kind of ['busy', 'no-answer', 'failed'] as const) {
    api.outcome = { kind }
    const created = await place()
    t.equal(await api.calls.get(created.sid)?.done, kind)
    const mine = gw.statuses.filter((s) => s.update.callSid === created.sid).map((s) => s.update)
    t.same(
      mine.map((s) => s.status),
      ['initiated', 'ringing', kind],
    )
    t.equal(mine.at(-1)?.callDurationSec, 0)
  }
  t.equal(gw.hooks.length, 0)
  t.match(gw.statuses.find((s) => s.update.status === 'busy')?.update, { sipResponseCode: 486 })
  t.same(gw.badSignatures, [])
})

t.test('REST hangup of an answered call stops the stream, then completed', async (t) => {
  let stopped = false
  const { api, gw, client, place } = await setup(t, (ws) => {
    ws.on('message', (data) => {
      if (carrier.newCodec().decode(data.toString())?.kind === 'stop') stopped = true
    })
  })
  api.outcome = { kind: 'answer', realtime: true }
  const created = await place()
  const fake = api.calls.get(created.sid)
  while (fake?.phone === undefined) await new Promise((r) => setTimeout(r, 5))
  const reply = await client.hangup(created.sid)
  t.equal(reply.status, 'completed')
  t.equal(await fake.done, 'completed')
  t.ok(stopped, 'the stream got stop')
  t.same(gw.statuses.map((s) => s.update.status).at(-1), 'completed')
})

t.test('REST hangup while ringing cancels', async (t) => {
  const { api, gw, client, place } = await setup(t)
  api.outcome = { kind: 'manual' }
  const created = await place()
  const reply = await client.hangup(created.sid)
  t.equal(reply.status, 'canceled')
  t.equal(await api.calls.get(created.sid)?.done, 'canceled')
  t.same(
    gw.statuses.map((s) => s.update.status),
    ['canceled'],
  )
})

t.test('callbacks signed with another token are refused by the gateway', async (t) => {
  const api = await FakeCallsApi.start({ stepMs: 1, outcome: { kind: 'busy' } })
  t.teardown(() => api.close())
  const gw = await startGateway(
    t,
    () => 'some-other-token',
    () => undefined,
  )
  const client = carrier.callsClient({ accountSid: api.accountSid, authToken: api.authToken, apiBaseUrl: api.baseUrl })
  const created = await client.createCall({
    to: '+15550002222',
    from: '+15550001111',
    url: `${gw.publicUrl}/v1/agents/carrier/twiml`,
    statusCallback: `${gw.publicUrl}/v1/agents/carrier/status`,
  })
  await api.calls.get(created.sid)?.done
  t.equal(gw.statuses.length, 0)
  t.ok(gw.badSignatures.length >= 3)
  t.ok(api.calls.get(created.sid)?.callbacks.every((c) => c.reply === 403))
})
