/**
 * What a session needs of a warm transfer, and what it offers one. The transfer itself lives in
 * `transfer/` (it uses the sessions layer; the sessions layer only knows this port), and the process hands
 * sessions a `WarmTransferFactory` (server/app.ts), as it hands them the cold transfer's `CallTransferer`.
 */
import type { EndReason } from '../../../core/end-reason.js'
import type { Log } from '../../../core/log.js'
import type { WarmTransferRequest } from '../../../core/warm-transfer-request.js'
import type { PipelineConfig, PipelineInput } from '../../../pipeline/index.js'
import type { SessionRow } from '../../store/schema.js'
import type { VendorEndpoints } from './pipeline-factory.js'
import type { SessionTransport } from './session-port.js'

/** A session's warm transfer slot: one transfer at a time. */
export interface WarmTransferSlot {
  /** True while a transfer runs (dialling to bridged): the agent does not hear the caller. */
  readonly active: boolean
  /** Starts a checked transfer; false when one already runs or the session is over. */
  start(request: WarmTransferRequest): boolean
  /** The session is ending with `reason`: what the end reason becomes (a bridged call says who hung up). */
  ending(reason: EndReason): EndReason
  /** `input` with the caller's audio and keys kept from the agent while a transfer runs. */
  gate(input: PipelineInput): PipelineInput
}

/** What a session offers its warm transfer. */
export interface WarmTransferSession {
  readonly log: Log
  readonly vendors: VendorEndpoints | undefined
  readonly row: SessionRow
  readonly config: PipelineConfig
  readonly transport: SessionTransport
  readonly signal: AbortSignal
  /** The session's recording, when it records: the bridged human's audio goes in with what the caller heard. */
  recording(): { heardLive(audio: Buffer): void } | undefined
  input(): PipelineInput
  end(reason: EndReason): Promise<void>
  /** Sends lifecycle webhook `event` (built lazily) when the agent's `session_webhook.events` lists it. */
  emit(event: string, build: () => { type: string } & Record<string, unknown>): void
  customMetadata(): Record<string, unknown> | undefined
  /** The caller is on the transfer's hold or not any more (the duration limit does not count it). */
  held(on: boolean): void
}

/** Builds a session's slot; undefined when the session cannot transfer warm (a browser, a test transport). */
export type WarmTransferFactory = (session: WarmTransferSession) => WarmTransferSlot | undefined
