/**
 * A broadcast channel between every gateway process on one database: Postgres `LISTEN/NOTIFY` on a server, an
 * in-process fan-out on the embedded database (PGlite runs inside one process, so every session manager that
 * can share it lives in that process; going through PGlite's own LISTEN would add a round trip and nothing else).
 *
 * Delivery is at most once, as NOTIFY's: a message published while a listener is reconnecting is lost, so a
 * subscriber that cares also gets `resync` after every (re)connection and re-reads what it must from the tables.
 */
import pg from 'pg'
import type { Log } from '../../core/log.js'

/** Postgres refuses NOTIFY payloads of 8000 bytes or more; ours stay well below. */
export const NOTIFY_PAYLOAD_LIMIT_BYTES = 7_900

/** The one channel voxgate listens on. */
export const NOTIFY_CHANNEL = 'voxgate_commands'

/** What a subscriber is told. */
export interface NotificationListener {
  /** A message from any process (this one included). */
  message(payload: string): void
  /** The listening connection was (re)established: messages may have been missed before it. */
  resync?(): void
}

/** A broadcast channel between the processes on one database. */
export interface Notifications {
  /** Sends `payload` (at most NOTIFY_PAYLOAD_LIMIT_BYTES bytes of UTF-8) to every subscriber of every process. */
  publish(payload: string, options?: { signal?: AbortSignal }): Promise<void>
  /** Starts listening on the first call; returns the unsubscribe function. */
  subscribe(listener: NotificationListener): () => void
  /** Stops listening; idempotent. */
  close(): Promise<void>
}

/**
 * Messages of other subsystems on the shared channel begin with `{"topic":` (the tunnel relay's); session commands
 * have no topic. A subscriber skips the topics that are not its own without parsing them.
 */
export function hasTopic(payload: string): boolean {
  return payload.startsWith('{"topic":')
}

function checkSize(payload: string): void {
  const bytes = Buffer.byteLength(payload, 'utf8')
  if (bytes > NOTIFY_PAYLOAD_LIMIT_BYTES) throw new RangeError(`notification payload of ${bytes} bytes is over the limit`)
}

/** The embedded database's channel: every subscriber of this process, asynchronously, as NOTIFY would. */
export class LocalNotifications implements Notifications {
  readonly #listeners = new Set<NotificationListener>()

  async publish(payload: string): Promise<void> {
    checkSize(payload)
    await Promise.resolve()
    for (const l of [...this.#listeners]) deliver(l, payload)
  }

  subscribe(listener: NotificationListener): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  async close(): Promise<void> {
    this.#listeners.clear()
  }
}

function deliver(l: NotificationListener, payload: string): void {
  try {
    l.message(payload)
  } catch {
    // A subscriber's failure is its own; the others still get the message.
  }
}

/** Reconnect delays after a lost listening connection: doubling, capped. */
const RECONNECT_MIN_MS = 100
const RECONNECT_MAX_MS = 5_000

/**
 * The server's channel: one dedicated connection runs `LISTEN` (a pooled one cannot: the pool hands it to other
 * queries); publishing goes through the pool. A lost listening connection is reopened with backoff until
 * `close()`, and subscribers are told to resync each time it is back.
 */
export class PgNotifications implements Notifications {
  readonly #listeners = new Set<NotificationListener>()
  #client: pg.Client | undefined
  #started = false
  #closed = false
  #retryMs = RECONNECT_MIN_MS
  #retryTimer: NodeJS.Timeout | undefined

  readonly #pool: pg.Pool
  readonly #connectionString: string
  readonly #log: Log | undefined
  constructor(pool: pg.Pool, connectionString: string, log?: Log) {
    this.#pool = pool
    this.#connectionString = connectionString
    this.#log = log
  }

  async publish(payload: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    checkSize(payload)
    options.signal?.throwIfAborted()
    await this.#pool.query('select pg_notify($1, $2)', [NOTIFY_CHANNEL, payload])
  }

  subscribe(listener: NotificationListener): () => void {
    this.#listeners.add(listener)
    if (!this.#started) {
      this.#started = true
      void this.#connect()
    }
    return () => this.#listeners.delete(listener)
  }

  async #connect(): Promise<void> {
    if (this.#closed) return
    const client = new pg.Client({ connectionString: this.#connectionString })
    this.#client = client
    let lost = false
    const onLost = (err?: Error) => {
      if (lost) return
      lost = true
      if (this.#client === client) this.#client = undefined
      client.removeAllListeners('notification')
      void client.end().catch(() => undefined)
      if (this.#closed) return
      this.#log?.warn({ err, retry_ms: this.#retryMs }, 'notification listener lost its connection; reconnecting')
      this.#retryTimer = setTimeout(() => void this.#connect(), this.#retryMs)
      this.#retryTimer.unref()
      this.#retryMs = Math.min(RECONNECT_MAX_MS, this.#retryMs * 2)
    }
    client.on('error', onLost)
    client.on('end', () => onLost())
    client.on('notification', (n) => {
      if (n.channel !== NOTIFY_CHANNEL || n.payload === undefined) return
      for (const l of [...this.#listeners]) deliver(l, n.payload)
    })
    try {
      await client.connect()
      await client.query(`listen ${NOTIFY_CHANNEL}`)
    } catch (e) {
      onLost(e as Error)
      return
    }
    if (this.#closed) {
      await client.end().catch(() => undefined)
      return
    }
    this.#retryMs = RECONNECT_MIN_MS
    for (const l of [...this.#listeners]) l.resync?.()
  }

  /** The listening connection's backend pid (tests end it to prove the reconnect). */
  get listenerPid(): number | undefined {
    return (this.#client as unknown as { processID?: number } | undefined)?.processID
  }

  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#retryTimer)
    this.#listeners.clear()
    const c = this.#client
    this.#client = undefined
    if (c !== undefined) await c.end().catch(() => undefined)
  }
}
