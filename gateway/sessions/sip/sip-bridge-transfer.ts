/**
 * A cold `response.transfer` on a SIP call whose peer cannot take a REFER (then the gateway bridges): the
 * gateway dials the target through the organization's outbound trunk and bridges the two calls itself. It is the
 * warm transfer's machinery with a cold transfer's settings: no whisper, no hold line (the caller hears
 * the hold audio while it rings), `accept: "none"` (the answer connects), the default timeout. The session lives on
 * while bridged (it is the caller's call) and ends `transfer_caller_hangup` or `transfer_human_hangup`; a failure
 * brings the caller back to the agent with `transfer.failed`, as a warm transfer's does.
 */
import type { TransferTarget } from '../../../core/transfer-target.js'
import { WARM_TRANSFER_TIMEOUT_S, type WarmTransferRequest } from '../../../core/warm-transfer-request.js'
import type { WarmTransferSlot } from '../ports/warm-transfer-port.js'

/** True when the peer's `Allow` lists REFER (it can be transferred blind); unknown (no `Allow`) counts as no. */
export function peerTakesRefer(peerAllows: readonly string[] | undefined): boolean {
  return peerAllows?.includes('REFER') === true
}

/** The warm request a bridged cold transfer runs as. */
export function bridgeTransferRequest(target: TransferTarget): WarmTransferRequest {
  return {
    target,
    whisper: undefined,
    hold: undefined,
    accept: 'none',
    transcribe: false,
    forwardData: false,
    timeoutMs: WARM_TRANSFER_TIMEOUT_S.default * 1000,
  }
}

/** Starts the bridged transfer on the session's warm slot; false when a transfer already runs or the session is over. */
export function sipBridgeTransfer(warm: WarmTransferSlot, target: TransferTarget): boolean {
  return warm.start(bridgeTransferRequest(target))
}
