/**
 * The SIP endpoint as the sessions layer sees it (server/ wires the running endpoint in): it dials a trunk and
 * reports progress, the answer (with the call's session transport) or the failure. Types only, so the call
 * deps can name it without importing the outbound-call code.
 */
import type { SessionPort, SessionTransport } from '../ports/session-port.js'

/** Why a dial attempt ended without an answer (the endpoint's words). */
export type SipTrunkDialFailure =
  | { readonly kind: 'rejected'; readonly status: number; readonly reason: string }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'bad_answer'; readonly reason: string }

/** The answered call's transport: a session transport the opened session is attached to. */
export interface SipTrunkTransport extends SessionTransport {
  attach(session: SessionPort): void
  /**
   * Plays mu-law 8 kHz to the callee outside any session turn (a warm transfer's whisper and bridged audio);
   * `onPlayed` once its last frame left; false when the pacer's queue was full.
   */
  play(audio: Buffer, onPlayed?: () => void): boolean
}

/** The SIP endpoint as the sessions layer sees it. */
export interface SipTrunkDialer {
  dial(
    request: {
      uri: string
      from: string
      to: string
      credentials?: { username: string; password: string } | undefined
      /** The trunk's `media_encryption`. */
      mediaEncryption?: 'none' | 'optional' | 'required' | undefined
    },
    events: {
      onProgress(status: number): void
      /** The callee's early media (a 180/183 with SDP), mu-law 8 kHz 20 ms frames; without it none is opened. */
      onEarlyAudio?(frame: Buffer): void
      onAnswered(transport: SipTrunkTransport): void
      onFailed(failure: SipTrunkDialFailure): void
      onEnded?(): void
    },
  ): Promise<{ readonly callId: string; cancel(): void } | { readonly refused: string }>
}

/** What the SIP side of outbound calls needs beyond the carrier's. */
export interface SipOutboundDeps {
  /** The running endpoint; undefined while SIP is off (the carrier path is used). */
  readonly sipDialer?: (() => SipTrunkDialer | undefined) | undefined
  /** SIP_CREDENTIALS_KEY: opens the trunk's sealed password. */
  readonly sipCredentialsKey?: Buffer | undefined
}
