/**
 * A warm transfer leg's media stream that reached a replica other than the one waiting for it (a balancer spreads
 * the carrier's connections): this replica opens a WebSocket to the waiting replica's direct address with the same
 * path, then completes the carrier's upgrade and passes every frame through both ways, untouched. The waiting
 * replica sees the stream as if the carrier had connected to it; the relay only copies frames.
 */
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocket, type WebSocketServer } from 'ws'
import type { Log } from '../../core/log.js'
import { LEG_RELAYED_HEADER } from '../../gateway/transfer/transfer-legs.js'
import { refuseUpgrade } from '../http/upgrade-refusal.js'
import { MAX_BUFFERED_BYTES } from './media-stream-transport.js'

/** Replicas are on one network: a connection that does not open in this time means the other one is not there. */
export const RELAY_CONNECT_TIMEOUT_MS = 2_000

/** The relays of one process, so a replica that shuts down keeps them as long as it keeps its sessions. */
export class LegRelays {
  readonly #open = new Set<{ close(code: number, reason: string): void; done: Promise<void> }>()

  /** Relays running now. */
  get size(): number {
    return this.#open.size
  }

  /** @internal Tracks one relay until `done`. */
  add(relay: { close(code: number, reason: string): void; done: Promise<void> }): void {
    this.#open.add(relay)
    void relay.done.finally(() => this.#open.delete(relay))
  }

  /**
   * Waits until every relay ended by itself, at most `graceMs`; those still open then are closed (1001, going
   * away: the carrier ends the human's call, the waiting replica hears the leg end).
   */
  async drain(graceMs: number): Promise<void> {
    if (this.#open.size === 0) return
    let timer: NodeJS.Timeout | undefined
    const all = Promise.all([...this.#open].map((r) => r.done)).then(() => undefined)
    await Promise.race([all, new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))])
    clearTimeout(timer)
    for (const r of this.#open) r.close(1001, 'replica shutting down')
    await all
  }
}

/** What one relay needs. */
export interface LegRelayDeps {
  /** Completes the carrier's upgrade (the route's server for transfer legs). */
  readonly sockets: WebSocketServer
  readonly relays: LegRelays
  readonly log: Log
}

/**
 * Relays the carrier's upgrade on `path` to `replicaUrl`. The waiting replica's refusal (the leg is over) is
 * passed on with its status; an unreachable replica is 502.
 */
export async function relayTransferLeg(
  deps: LegRelayDeps,
  replicaUrl: string,
  path: string,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  const target = `${replicaUrl.replace(/^http/, 'ws')}${path}`
  const upstream = new WebSocket(target, {
    headers: { [LEG_RELAYED_HEADER]: '1' },
    perMessageDeflate: false,
    handshakeTimeout: RELAY_CONNECT_TIMEOUT_MS,
    maxPayload: deps.sockets.options.maxPayload,
  })
  upstream.on('error', (err) => deps.log.debug({ err }, 'transfer leg relay: upstream error'))
  const opened = await new Promise<{ ok: true } | { ok: false; status: number }>((resolve) => {
    upstream.once('open', () => resolve({ ok: true }))
    upstream.once('unexpected-response', (_req, res) => {
      res.resume()
      resolve({ ok: false, status: res.statusCode ?? 502 })
    })
    upstream.once('error', () => resolve({ ok: false, status: 502 }))
  })
  if (!opened.ok) {
    upstream.terminate()
    deps.log.info({ status: opened.status }, 'transfer leg relay refused by the waiting replica')
    return refuseUpgrade(
      socket,
      opened.status,
      opened.status === 502 ? 'the replica running this transfer cannot be reached' : 'unknown or expired key',
    )
  }
  deps.sockets.handleUpgrade(req, socket, head, (carrier) => {
    let resolveDone: () => void = () => undefined
    const done = new Promise<void>((resolve) => (resolveDone = resolve))
    let closed = 0
    const closeBoth = (code: number, reason: string) => {
      for (const ws of [carrier, upstream]) {
        if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(validCode(code), reason)
      }
    }
    const pipe = (from: WebSocket, to: WebSocket) => {
      from.on('message', (data, isBinary) => {
        if (to.readyState !== to.OPEN) return
        // A side that stopped reading: frames are dropped rather than queued without bound.
        if (to.bufferedAmount > MAX_BUFFERED_BYTES) return
        to.send(data as Buffer, { binary: isBinary })
      })
      from.on('close', (code, reason) => {
        closeBoth(code, reason.toString())
        if (++closed === 2) resolveDone()
      })
      from.on('error', () => from.terminate())
    }
    pipe(carrier, upstream)
    pipe(upstream, carrier)
    deps.relays.add({ close: closeBoth, done })
  })
}

/** A close code one may send (1005 and 1006 only report that none came). */
function validCode(code: number): number {
  return code === 1005 || code === 1006 || code < 1000 || code >= 5000 ? 1000 : code
}
