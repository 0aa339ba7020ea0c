import type { EndReason } from '../../../core/end-reason.js'
import type { TransferTarget } from '../../../core/transfer-target.js'
import type { InputAudioFormat, OutputAudioFormat, PipelineEvent, PipelineInput } from '../../../pipeline/index.js'

/**
 * The two sides of a transport (browser socket, carrier media stream, a test): the session drives the transport
 * through `SessionTransport`, the transport drives the session through `SessionPort`. A new transport implements
 * the first and is handed the second; it needs nothing else of the sessions layer.
 */

/** The channels a caller reaches the gateway on. */
export type TransportKind = 'browser' | 'carrier' | 'sip'

/** What a transport must offer the session. */
export interface SessionTransport {
  readonly kind: TransportKind
  /** The audio formats of the wire; a transport without audio runs text only. */
  readonly audio?: { input: InputAudioFormat; output: OutputAudioFormat }
  /** Pipeline events for the wire (turns, audio, transcripts, clear, hangup). Must not throw. */
  deliver?(event: PipelineEvent): void
  /**
   * Plays raw audio in the output format to the caller, in order, outside the pipeline's turns (no marks): a warm
   * transfer's hold audio and bridged audio. Transports that cannot leave it out.
   */
  play?(audio: Buffer): void
  /**
   * SIP: the methods the peer's `Allow` header listed (upper-cased), undefined when it sent none. A cold transfer
   * to a peer that does not list REFER is bridged by the gateway (`sip-bridge-transfer.ts`).
   */
  readonly peerAllows?: readonly string[] | undefined
  /** Called exactly once when the session ends for any reason other than the transport itself closing. */
  close(reason: EndReason): void
  /** SIP: the call can transfer itself (REFER) when `supported`; see `sipTransferer`. */
  readonly referral?: CallReferral
}

/** A call that transfers its caller itself, over its own signalling (SIP REFER). */
export interface CallReferral {
  /** False when the peer cannot be asked (a SIP peer that did not list REFER in its Allow header). */
  readonly supported: boolean
  /** Resolves once the caller is connected to `target`; rejects with a registered error otherwise. */
  refer(target: TransferTarget, signal: AbortSignal): Promise<void>
}

/**
 * The narrow view of a connected session that a transport drives: `CallSession` implements it, and transport
 * tests implement it with a fake.
 */
export interface SessionPort {
  readonly id: string
  readonly isEnded: boolean
  /** The running pipeline's input; absent while the session runs without one (frames are then dropped). */
  readonly input?: PipelineInput
  /** Ends the session (the transport decided: a protocol error, a hangup). */
  end(reason: EndReason): Promise<void>
  /** The transport's socket closed by itself; the session ends without telling the transport again. */
  transportClosed(reason?: EndReason): Promise<void>
}
