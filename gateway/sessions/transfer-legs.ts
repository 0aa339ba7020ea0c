/**
 * The warm transfers' human legs this process is waiting for (issue 28). A leg is dialled through the carrier's
 * Calls API with markup whose media stream URL carries a one-time token (`tl_...`) instead of a session key, and
 * whose status and machine detection callbacks carry `?leg=<token>`: the media-stream upgrade and the carrier hooks
 * find the leg here, so a transfer leg is never admitted as an agent call.
 *
 * In-process: the carrier must reach the replica that runs the session (its PUBLIC_URL routes there). A balancer
 * that spreads one call's requests over replicas would need these forwarded on the bus (not done yet).
 */
import { randomBytes } from 'node:crypto'
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

/** The legs of one process, by token. */
export class TransferLegs {
  readonly #legs = new Map<string, TransferLegHandler>()

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

  /** Forgets a leg (its transfer is over). */
  unregister(token: string): void {
    this.#legs.delete(token)
  }

  /** How many legs are registered. */
  get size(): number {
    return this.#legs.size
  }
}
