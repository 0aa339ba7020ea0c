import type { Notifications } from '../store/notifications.js'
import type { LocalTunnel, RelayRequest, ResponseSink } from './local-tunnel.js'
import { decodeRelayPart, encodeRelayPart, newRelayId, PartAssembler, splitEvent, type RelayPart } from './relay-codec.js'

/** How long the replica a request lands on waits for the holding replica to confirm it has the request. */
const ACK_TIMEOUT_MS = 3_000
/** A response that has not started this long after the request reached the holder is acknowledged first. */
const ACK_DELAY_MS = 250
/** How long a relayed response's start waits for its first body chunk, to travel in one notification. */
const START_HOLD_MS = 5
/** How long the holder keeps the first parts of a request whose last part has not come. */
const INCOMPLETE_REQUEST_MS = 30_000
/** Requests this replica relays to other replicas at once. */
const MAX_REMOTE_IN_FLIGHT = 256

/** One event of a relayed response, as it crosses replicas. */
type ResponseEvent =
  | { e: 'ack' }
  | { e: 'start'; status: number; headers: [string, string][] }
  | { e: 'body'; data: string }
  | { e: 'end' }
  | { e: 'fail'; code: Parameters<ResponseSink['fail']>[0]; message: string }

interface RemoteWait {
  sink: ResponseSink
  assembler: PartAssembler
  acked: boolean
  finish: () => void
}

interface HeldRemote {
  assembler: PartAssembler
  abort: AbortController
  /** The request is whole and being replayed. */
  started?: boolean
}

/** What the relay needs of its replica's tunnel hub. */
export interface NotifiedRelayDeps {
  readonly notifications: Notifications
  /** The tunnel held by this replica with that id, if any. */
  localTunnel(id: string): LocalTunnel | undefined
  /** The replica named as the tunnel's holder did not confirm a request in time. */
  holderSilent(tunnelId: string): void
}

/**
 * The relay between replicas through the store's notification channel (Postgres NOTIFY with a server;
 * in-process with PGlite), for a tunnel held by another replica that cannot be reached directly: the request
 * goes out in parts, the holder replays it on its tunnel, and the response comes back the same way, event by
 * event. Both sides live here: the replica that waits and the one that holds the tunnel.
 */
export class NotifiedRelay {
  readonly #waiting = new Map<string, RemoteWait>()
  readonly #held = new Map<string, HeldRemote>()
  readonly #deps: NotifiedRelayDeps

  constructor(deps: NotifiedRelayDeps) {
    this.#deps = deps
  }

  /** Relays one request to the replica holding `tunnelId`; resolves when the response ended or failed. */
  async request(tunnelId: string, req: RelayRequest, sink: ResponseSink, signal: AbortSignal): Promise<void> {
    if (this.#waiting.size >= MAX_REMOTE_IN_FLIGHT) {
      sink.fail('tunnel_busy', 'too many tunnel requests in flight on this replica')
      return
    }
    const rid = newRelayId()
    const done = new Promise<void>((resolve) => {
      const wait: RemoteWait = { sink, assembler: new PartAssembler(), acked: false, finish: resolve }
      this.#waiting.set(rid, wait)
      const timer = setTimeout(() => {
        if (wait.acked || this.#waiting.get(rid) !== wait) return
        this.#waiting.delete(rid)
        this.#deps.holderSilent(tunnelId)
        sink.fail('tunnel_unavailable', 'the replica holding the tunnel did not answer')
        resolve()
      }, ACK_TIMEOUT_MS)
      timer.unref()
      signal.addEventListener(
        'abort',
        () => {
          if (this.#waiting.get(rid) !== wait) return
          this.#waiting.delete(rid)
          const part = typeof signal.reason === 'string' ? signal.reason : ''
          void this.#publish([{ topic: 'tunnel', k: 'cancel', rid, tunnel: tunnelId, seq: 0, last: true, part }])
          resolve()
        },
        { once: true },
      )
    })
    const event = JSON.stringify({
      method: req.method,
      path: req.path,
      headers: req.headers,
      body: req.body.toString('base64'),
      sentAt: req.sentAt,
    })
    try {
      await this.#publish(splitEvent('req', rid, tunnelId, event, 0))
    } catch (e) {
      const wait = this.#waiting.get(rid)
      if (wait !== undefined) {
        this.#waiting.delete(rid)
        sink.fail('tunnel_unavailable', `the relay to the replica holding the tunnel failed: ${(e as Error).message}`)
        wait.finish()
      }
    }
    return done
  }

  /** Fails every request still waiting for another replica (this one shuts down). */
  failWaiting(message: string): void {
    for (const w of this.#waiting.values()) {
      w.sink.fail('tunnel_unavailable', message)
      w.finish()
    }
    this.#waiting.clear()
  }

  /** Publishes parts one after another: each waits for the previous, so NOTIFY delivers them in order. */
  async #publish(parts: RelayPart[]): Promise<void> {
    for (const p of parts) await this.#deps.notifications.publish(encodeRelayPart(p))
  }

  /** A notification from another replica: a request for a tunnel held here, a cancel, or a response part. */
  onNotification(payload: string): void {
    const p = decodeRelayPart(payload)
    if (p === undefined) return
    if (p.k === 'req') this.#onRemoteRequest(p)
    else if (p.k === 'cancel') this.#held.get(p.rid)?.abort.abort(p.part === '' ? undefined : p.part)
    else this.#onRemoteResponse(p)
  }

  /** This replica holds the tunnel: replay the request, send the response back part by part. */
  #onRemoteRequest(p: RelayPart): void {
    const local = this.#deps.localTunnel(p.tunnel)
    if (local === undefined) return
    let held = this.#held.get(p.rid)
    if (held === undefined) {
      const fresh: HeldRemote = { assembler: new PartAssembler(), abort: new AbortController() }
      held = fresh
      this.#held.set(p.rid, fresh)
      // A request whose remaining parts never come (a lost notification) is forgotten, not kept forever.
      setTimeout(() => {
        if (this.#held.get(p.rid) === fresh && !fresh.started) this.#held.delete(p.rid)
      }, INCOMPLETE_REQUEST_MS).unref()
    }
    const events = held.assembler.push(p)
    if (events === 'overflow') {
      this.#held.delete(p.rid)
      return
    }
    for (const text of events) {
      const r = JSON.parse(text) as { method: string; path: string; headers: [string, string][]; body: string; sentAt?: unknown }
      const h = held
      h.started = true
      const sink = this.#remoteSink(p.rid, p.tunnel)
      void local
        .forward(
          {
            method: r.method,
            path: r.path,
            headers: r.headers,
            body: Buffer.from(r.body, 'base64'),
            sentAt: typeof r.sentAt === 'number' ? r.sentAt : undefined,
          },
          sink,
          h.abort.signal,
        )
        .finally(() => this.#held.delete(p.rid))
    }
  }

  /**
   * The sink of a request relayed from another replica. Events queued while a notification is on its way go out
   * together in the next one (each NOTIFY is a database round trip). The response's start waits up to
   * START_HOLD_MS for its first body chunk so both travel in one notification; a response slower than
   * ACK_DELAY_MS to start is acknowledged first, so the other replica knows the request arrived.
   */
  #remoteSink(rid: string, tunnel: string): ResponseSink {
    let seq = 0
    let queue: ResponseEvent[] = []
    let sending = false
    let heldStart: ResponseEvent | undefined
    let startTimer: NodeJS.Timeout | undefined
    let ackTimer: NodeJS.Timeout | undefined = setTimeout(() => push({ e: 'ack' }), ACK_DELAY_MS)
    ackTimer.unref()
    const flush = async () => {
      if (sending) return
      sending = true
      try {
        while (queue.length > 0) {
          const batch = queue
          queue = []
          const parts = splitEvent('res', rid, tunnel, JSON.stringify(batch), seq)
          seq += parts.length
          await this.#publish(parts)
        }
      } catch {
        // A lost notification loses the rest of the response: the other replica's caller times out.
        queue = []
      } finally {
        sending = false
      }
    }
    const push = (ev: ResponseEvent) => {
      if (ackTimer !== undefined && ev.e !== 'ack') clearTimeout(ackTimer)
      ackTimer = undefined
      if (heldStart !== undefined && ev.e !== 'ack') {
        clearTimeout(startTimer)
        queue.push(heldStart)
        heldStart = undefined
      }
      queue.push(ev)
      void flush()
    }
    return {
      start: (status, headers) => {
        clearTimeout(ackTimer)
        ackTimer = undefined
        heldStart = { e: 'start', status, headers }
        startTimer = setTimeout(() => {
          if (heldStart === undefined) return
          queue.push(heldStart)
          heldStart = undefined
          void flush()
        }, START_HOLD_MS)
        startTimer.unref()
      },
      body: (chunk) => push({ e: 'body', data: chunk.toString('base64') }),
      end: () => push({ e: 'end' }),
      fail: (code, message) => push({ e: 'fail', code, message }),
    }
  }

  /** This replica waits for the response: hand each event to the HTTP response in order. */
  #onRemoteResponse(p: RelayPart): void {
    const wait = this.#waiting.get(p.rid)
    if (wait === undefined) return
    wait.acked = true
    const batches = wait.assembler.push(p)
    const finish = () => {
      this.#waiting.delete(p.rid)
      wait.finish()
    }
    if (batches === 'overflow') {
      wait.sink.fail('tunnel_unavailable', 'the relayed response lost its order')
      finish()
      return
    }
    for (const text of batches) {
      for (const ev of JSON.parse(text) as ResponseEvent[]) {
        if (ev.e === 'ack') continue
        if (ev.e === 'start') wait.sink.start(ev.status, ev.headers)
        else if (ev.e === 'body') wait.sink.body(Buffer.from(ev.data, 'base64'))
        else {
          if (ev.e === 'end') wait.sink.end()
          else wait.sink.fail(ev.code, ev.message)
          finish()
          return
        }
      }
    }
  }
}
