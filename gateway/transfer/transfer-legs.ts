/**
 * The warm transfers' human legs this process is waiting for. A leg is dialled through the carrier's Calls API with
 * markup whose media stream URL carries a one-time token (`tl_...`) instead of a session key, and whose status and
 * machine detection callbacks carry `?leg=<token>`: the media-stream upgrade and the carrier hooks find the leg
 * here, so a transfer leg is never admitted as an agent call.
 *
 * Behind a balancer they may land on any replica: each leg is also published in the database with this replica's
 * direct address (`REPLICA_URL`), and a replica that does not hold the token relays the stream and the callbacks
 * there (transports/media-stream/transfer-leg-relay.ts, api/routes/carrier-hooks.ts).
 */
import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Log } from '../../core/log.js'
import type { Database } from '../store/schema.js'
import { publishTransferLeg, transferLegReplica, withdrawTransferLeg } from '../store/transfer-leg-directory.js'
import type { CallStatus } from '../../core/call-status.js'
import type { CarrierCredentials } from '../../core/carrier-credentials.js'
import type { MachineVerdict } from '../../core/machine-verdict.js'

/** The one-time key prefix of a transfer leg's media stream (session keys never start with it). */
export const TRANSFER_LEG_KEY_PREFIX = 'tl_'
/** Most legs waiting in one process (one per warm transfer in flight). */
export const MAX_TRANSFER_LEGS = 10_000

/** What the gateway can do to the human's media stream. */
export interface LegMediaOut {
  /** Plays mu-law 8 kHz audio to the human (queued by the carrier, played in order). */
  send(audio: Buffer): void
  /** Asks the carrier to echo `name` once everything sent before it has played. */
  mark(name: string): void
  /** Drops what is queued and not yet played. */
  clear(): void
  /** Closes the stream (the carrier then ends the call). */
  close(): void
}

/** What the human's media stream reports. */
export interface LegMediaIn {
  media(audio: Buffer): void
  dtmf(digit: string): void
  mark(name: string): void
  /** The stream ended (the human hung up, or the carrier stopped it). */
  ended(): void
}

/** One leg a warm transfer dialled. */
export interface TransferLegHandler {
  /** The organization's carrier credentials: callbacks about the leg are signed with them. */
  readonly credentials: CarrierCredentials | undefined
  /** A status callback about the leg's call. */
  progress(status: CallStatus): void
  /** The carrier's machine detection verdict about the leg. */
  machineVerdict(verdict: MachineVerdict): void
  /** The leg's media stream opened; undefined refuses it (the transfer is over). */
  connect(out: LegMediaOut): LegMediaIn | undefined
}

/** Marks a leg's stream or callback one replica relays to another; the receiver never relays it again. */
export const LEG_RELAYED_HEADER = 'x-voxgate-leg-relayed'

/** Where the process publishes its legs for other replicas. */
interface LegDirectory {
  readonly db: Kysely<Database>
  /** This replica's direct address. */
  readonly replicaUrl: string
  readonly log: Log
}

/** The legs of one process, by token. */
export class TransferLegs {
  readonly #legs = new Map<string, TransferLegHandler>()
  #directory: LegDirectory | undefined

  /**
   * Publishes legs from now on in `db` with this replica's address, so other replicas relay theirs here. Without
   * it (a single process, unit tests) legs are only known in-process.
   */
  publishAt(directory: LegDirectory): void {
    this.#directory = directory
  }

  /** Makes a registered leg known to the other replicas (before it is dialled). */
  async publish(token: string, sessionId: string): Promise<void> {
    const d = this.#directory
    if (d !== undefined) await publishTransferLeg(d.db, token, sessionId, d.replicaUrl)
  }

  /**
   * The direct address of the other replica waiting for `token`; undefined when this process holds it, nobody
   * does, or legs are not published.
   */
  async replicaOf(token: string): Promise<string | undefined> {
    const d = this.#directory
    if (d === undefined || this.#legs.has(token)) return undefined
    const url = await transferLegReplica(d.db, token)
    return url === d.replicaUrl ? undefined : url
  }

  /** Registers a leg; returns its token, or undefined when the process holds too many. */
  register(handler: TransferLegHandler): string | undefined {
    if (this.#legs.size >= MAX_TRANSFER_LEGS) return undefined
    const token = `${TRANSFER_LEG_KEY_PREFIX}${randomBytes(24).toString('base64url')}`
    this.#legs.set(token, handler)
    return token
  }

  /** The leg of `token`, if it is still waited for. */
  get(token: string): TransferLegHandler | undefined {
    return this.#legs.get(token)
  }

  /** Forgets a leg (its transfer is over); its published row goes too. */
  unregister(token: string): void {
    if (!this.#legs.delete(token)) return
    const d = this.#directory
    if (d === undefined) return
    withdrawTransferLeg(d.db, token).catch((err: unknown) => d.log.warn({ err }, 'transfer leg row not removed (purged after a day)'))
  }

  /** How many legs are registered. */
  get size(): number {
    return this.#legs.size
  }
}
