import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocket, WebSocketServer } from 'ws'
import { silentLogger } from '../core/log.js'
import { LegRelays, relayTransferLeg } from '../transports/media-stream/transfer-leg-relay.js'
import { fmt, type BenchRow } from './bench-util.js'

/**
 * The cross-replica part of a warm transfer's bridge: the human's media stream reaching a replica that does not run
 * the session and relayed to the one that does (transports/media-stream/transfer-leg-relay.ts). The replica running
 * the session is a process of its own that sends every frame straight back; the carrier's side sends a media frame
 * as the carrier does (JSON, 160 bytes of mu-law in base64) and times its return, one frame at a time, either
 * straight to that process (one replica) or through the relay in this process (two replicas). Half the round trip
 * is the one-way time a frame spends between the carrier's socket and the session's replica; the relay's cost is
 * the difference. Target: under 5 ms p99 added.
 */
const FRAMES = 1500

export async function relayRows(repeats: number): Promise<BenchRow[]> {
  const owner = await startEchoProcess()
  const relays = new LegRelays()
  const legSockets = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 64 * 1024 })
  const relay = createServer()
  relay.on('upgrade', (req, socket, head) => {
    void relayTransferLeg({ sockets: legSockets, relays, log: silentLogger() }, owner.url, req.url ?? '/', req, socket, head)
  })
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r))
  const relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`
  const rows: BenchRow[] = []
  try {
    for (const [name, url] of [
      ['one replica (straight to the session)', owner.url],
      ['two replicas (relayed to the session)', relayUrl],
    ] as const) {
      const samples: number[] = []
      const relayed = url === relayUrl
      const opened = () => {
        // The relayed case must really go through the relay.
        if (relayed && relays.size !== 1) throw new Error(`expected one relay, found ${relays.size}`)
      }
      for (let r = 0; r < repeats; r++) {
        samples.push(...(await oneWay(`${url.replace(/^http/, 'ws')}/v1/agents/carrier/websocket/tl_bench`, opened)))
        // The relay of this repeat ends with its close handshakes.
        for (let i = 0; i < 200 && relays.size > 0; i++) await new Promise((r) => setTimeout(r, 10))
      }
      samples.sort((a, b) => a - b)
      const at = (q: number): number => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]! * 1000
      rows.push({
        case: `carrier stream, ${name}`,
        leg: 'one-way (half the round trip)',
        direction: 'to_session',
        frames: samples.length,
        'p50 µs': fmt(at(0.5)),
        'p99 µs': fmt(at(0.99)),
        'max µs': fmt(samples[samples.length - 1]! * 1000),
      })
    }
  } finally {
    await relays.drain(0)
    await new Promise((r) => relay.close(r))
    owner.stop()
  }
  return rows
}

/** Half of each frame's round trip, in ms, after a warm-up. */
async function oneWay(url: string, opened: () => void): Promise<number[]> {
  const ws = new WebSocket(url, { perMessageDeflate: false })
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
  })
  // The relay completes the carrier's upgrade from the upstream's open: give its bookkeeping a turn.
  await new Promise((r) => setImmediate(r))
  opened()
  const frame = JSON.stringify({
    event: 'media',
    streamSid: `MZ${'0'.repeat(32)}`,
    media: { track: 'inbound', chunk: '1', timestamp: '20', payload: Buffer.alloc(160, 0x7f).toString('base64') },
  })
  const out: number[] = []
  for (let i = 0; i < FRAMES; i++) {
    const sentAt = performance.now()
    await new Promise<void>((resolve) => {
      ws.once('message', () => resolve())
      ws.send(frame)
    })
    out.push((performance.now() - sentAt) / 2)
  }
  await new Promise((resolve) => {
    ws.once('close', resolve)
    ws.close()
  })
  return out.slice(50)
}

/** The replica running the session, reduced to what the relay needs of it: a WebSocket server that echoes frames. */
async function startEchoProcess(): Promise<{ url: string; stop(): void }> {
  const script = `
const { WebSocketServer } = require('ws')
const s = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false })
s.on('listening', () => console.log('PORT ' + s.address().port))
s.on('connection', (ws) => ws.on('message', (d, binary) => ws.send(d, { binary })))
`
  const proc = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() })
  const port = await new Promise<number>((resolve, reject) => {
    let text = ''
    proc.stdout.on('data', (c: Buffer) => {
      text += c.toString()
      const m = /PORT (\d+)/.exec(text)
      if (m) resolve(Number(m[1]))
    })
    proc.once('exit', (code) => reject(new Error(`echo process exited with ${code}`)))
  })
  return { url: `http://127.0.0.1:${port}`, stop: () => proc.kill() }
}
