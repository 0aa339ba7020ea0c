import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { WebSocket } from 'ws'
import type { Database, TunnelRow } from '../store/schema.js'
import type { Notifications } from '../store/notifications.js'
import { closeTunnel, expiredTunnelIds, getTunnel, renewTunnels, type WebhookSwap } from '../store/tunnels.js'
import type { Log } from '../../core/log.js'
import { LocalTunnel, type RelayRequest, type ResponseSink, type WebhookDeadlines } from './local-tunnel.js'
import { NotifiedRelay } from './notified-relay.js'
import { SessionTail } from './session-tail.js'
import { forwardToHolder } from './direct-forward.js'

/** A tunnel's lease: renewed every third of it; past it any replica restores the agent's previous webhook. */
export const TUNNEL_LEASE_MS = 15_000
/** How long a tunnel seen live in the table is trusted without asking again. */
const KNOWN_LIVE_MS = 2_000

/**
 * The tunnels of this replica and the relay between replicas. A webhook request for a tunnel held here goes
 * straight to its WebSocket; one held by another replica goes out on the store's notification channel (Postgres
 * NOTIFY with a server; in-process with PGlite) and the response comes back the same way, event by event.
 * The holder renews each tunnel's lease; every replica sweeps tunnels whose lease ran out (their holder crashed,
 * or their CLI went away without `close`) and restores the agent's previous webhook. A CLI whose connection
 * dropped (or whose replica shut down) keeps its tunnel for the lease: it reconnects with the tunnel's id and takes
 * it back, address and all, so the agent's webhook never points elsewhere meanwhile.
 */
export class TunnelHub {
  readonly holder = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
  readonly #local = new Map<string, LocalTunnel>()
  readonly #relay: NotifiedRelay
  readonly #tails = new Map<string, SessionTail>()
  /** Tunnels held elsewhere, seen live in the table: until when that is trusted, and the holder's direct address. */
  readonly #knownLive = new Map<string, { until: number; holderUrl: string | null }>()
  /** Where other replicas reach this one directly (REPLICA_URL); set once listening. */
  directUrl: string | undefined
  /** Requests for tunnels held elsewhere: forwarded straight to the holder, or through the notification channel. */
  readonly relays = { direct: 0, notified: 0 }
  #unsubscribe: () => void = () => undefined
  #timer: NodeJS.Timeout | undefined
  #stopped = false
  /** The gateway is shutting down: a caller that stops waiting now is the shutdown. */
  #draining = false

  constructor(
    readonly deps: {
      db: Kysely<Database>
      notifications: Notifications
      log: Log
      swap: WebhookSwap
      leaseMs?: number
    },
  ) {
    this.#relay = new NotifiedRelay({
      notifications: deps.notifications,
      localTunnel: (id) => this.#local.get(id),
      holderSilent: (id) => this.#knownLive.delete(id),
    })
  }

  get leaseMs(): number {
    return this.deps.leaseMs ?? TUNNEL_LEASE_MS
  }

  /** Starts listening to other replicas and the lease timer (which first sweeps tunnels left by a crash). */
  start(): void {
    this.#unsubscribe = this.deps.notifications.subscribe({ message: (payload) => this.#relay.onNotification(payload) })
    void this.#tick()
    this.#timer = setInterval(() => void this.#tick(), Math.max(200, Math.floor(this.leaseMs / 3)))
    this.#timer.unref()
  }

  /**
   * Takes a connected CLI's socket for the tunnel just opened (or taken back). A `close` frame closes the tunnel
   * and restores the previous webhook; a socket that closes without one leaves the tunnel to its lease.
   */
  attach(
    ws: WebSocket,
    tunnel: TunnelRow,
    opts: { tail: boolean; previousUrl: string | null; deadlines?: WebhookDeadlines | undefined; resumed?: boolean },
  ): LocalTunnel {
    const stale = this.#local.get(tunnel.id)
    if (stale !== undefined) {
      // The CLI reconnected before this replica noticed its old socket was dead.
      this.#detach(stale)
      stale.ws.terminate()
    }
    const local = new LocalTunnel(tunnel.id, tunnel.agent_id, ws, () => void this.#close(local, true), opts.deadlines)
    this.#local.set(tunnel.id, local)
    ws.on('close', () => this.#detach(local))
    local.send({
      type: 'tunnel.ready',
      tunnel_id: tunnel.id,
      agent_id: tunnel.agent_id,
      webhook_url: tunnel.webhook_url,
      previous_webhook_url: opts.previousUrl,
      resumed: opts.resumed === true,
    })
    if (opts.tail) {
      const tail = new SessionTail(this.deps.db, tunnel.agent_id, tunnel.created_at, (m) => local.send(m), this.deps.log)
      this.#tails.set(tunnel.id, tail)
      tail.start()
    }
    return local
  }

  /** Forgets a tunnel's socket; its row stays until its CLI takes it back or its lease runs out. */
  #detach(local: LocalTunnel): boolean {
    if (this.#local.get(local.id) !== local) return false
    this.#local.delete(local.id)
    this.#tails.get(local.id)?.stop()
    this.#tails.delete(local.id)
    local.closed(this.#draining ? 'shutdown' : undefined)
    if (!this.#stopped) {
      this.deps.log.info(
        { tunnel_id: local.id, agent_id: local.agentId },
        'tunnel connection lost; the agent keeps the tunnel address until the CLI is back or the lease runs out',
      )
    }
    return true
  }

  /** The CLI asked to stop: close the tunnel and restore the agent's previous webhook. */
  async #close(local: LocalTunnel, answer: boolean): Promise<void> {
    if (this.#local.get(local.id) !== local) return
    this.#local.delete(local.id)
    this.#tails.get(local.id)?.stop()
    this.#tails.delete(local.id)
    local.closed()
    let closed: Awaited<ReturnType<typeof closeTunnel>>
    try {
      closed = await closeTunnel(this.deps.db, local.id, this.deps.swap, { holder: this.holder })
    } catch (e) {
      // The lease runs out and a sweep restores it.
      this.deps.log.warn({ err: e, tunnel_id: local.id }, 'tunnel close failed; the lease sweep restores the webhook')
      closed = undefined
    }
    this.deps.log.info({ tunnel_id: local.id, agent_id: local.agentId, restored: closed?.restored ?? false }, 'tunnel closed')
    if (answer) {
      local.send({ type: 'tunnel.closed', restored: closed?.restored ?? false, webhook_url: closed?.previousUrl ?? null })
      local.ws.close(1000, 'tunnel closed')
    }
  }

  /**
   * Relays one webhook request to its tunnel wherever it is held; resolves when the response ended or failed
   * (`sink` has been told). `signal`: the caller went away.
   */
  async relay(
    tunnelId: string,
    req: RelayRequest,
    sink: ResponseSink,
    signal: AbortSignal,
    opts: { forwarded?: boolean } = {},
  ): Promise<void> {
    signal = this.#withShutdownReason(signal)
    const local = this.#local.get(tunnelId)
    if (local !== undefined) return local.forward(req, sink, signal)
    let known = this.#knownLive.get(tunnelId)
    if (known === undefined || known.until < Date.now()) {
      const row = await getTunnel(this.deps.db, tunnelId)
      if (row === undefined || row.lease_expires_at.getTime() < Date.now()) {
        this.#knownLive.delete(tunnelId)
        sink.fail('tunnel_unavailable', 'no tunnel is connected at this address')
        return
      }
      if (this.#knownLive.size > 10_000) this.#knownLive.clear()
      known = { until: Date.now() + KNOWN_LIVE_MS, holderUrl: row.holder_url }
      this.#knownLive.set(tunnelId, known)
    }
    // Straight to the holder over HTTP when it can be reached (one hop instead of two database round trips); a
    // request forwarded here already, or a holder that does not answer, goes through the notification channel.
    if (known.holderUrl !== null && known.holderUrl !== this.directUrl && opts.forwarded !== true) {
      if (await forwardToHolder(known.holderUrl, tunnelId, req, sink, signal)) {
        this.relays.direct++
        return
      }
    }
    this.relays.notified++
    return this.#relay.request(tunnelId, req, sink, signal)
  }

  /** `signal`, aborted with the reason `shutdown` when the caller stops waiting while the gateway drains. */
  #withShutdownReason(signal: AbortSignal): AbortSignal {
    const c = new AbortController()
    const pass = () => c.abort(this.#draining ? 'shutdown' : signal.reason)
    if (signal.aborted) pass()
    else signal.addEventListener('abort', pass, { once: true })
    return c.signal
  }

  /** The gateway starts shutting down: requests it stops waiting for are cancelled as the shutdown. */
  drain(): void {
    this.#draining = true
  }

  /** Renews this replica's leases (a tunnel swept meanwhile is closed) and sweeps crashed replicas' tunnels. */
  async #tick(): Promise<void> {
    if (this.#stopped) return
    try {
      const ids = [...this.#local.keys()]
      const held = await renewTunnels(this.deps.db, this.holder, ids, this.leaseMs)
      for (const id of ids) {
        if (!held.has(id)) this.#local.get(id)?.ws.close(4000, 'tunnel lease lost')
      }
      for (const id of await expiredTunnelIds(this.deps.db)) {
        const closed = await closeTunnel(this.deps.db, id, this.deps.swap, { onlyIfExpired: true })
        if (closed !== undefined) {
          this.deps.log.warn(
            { tunnel_id: id, agent_id: closed.tunnel.agent_id, restored: closed.restored },
            'tunnel swept: its process stopped renewing the lease; previous webhook restored',
          )
        }
      }
    } catch (e) {
      this.deps.log.warn({ err: e }, 'tunnel lease renewal failed')
    }
  }

  /** Sweeps now (tests; a replica's start does it too). */
  sweep(): Promise<void> {
    return this.#tick()
  }

  /**
   * Lets go of every tunnel held here and stops listening. The tunnels stay, their agents pointing at them: their
   * CLIs reconnect (to another replica, or this one restarted) and take them back; one that does not come back
   * within the lease is swept by any replica (or this one's next start) and its agent's previous webhook restored.
   */
  async stop(): Promise<void> {
    if (this.#stopped) return
    this.#draining = true
    this.#stopped = true
    clearInterval(this.#timer)
    this.#unsubscribe()
    for (const local of [...this.#local.values()]) {
      this.#detach(local)
      local.ws.close(1012, 'the gateway is restarting')
    }
    this.#relay.failWaiting('the gateway is shutting down')
  }
}
