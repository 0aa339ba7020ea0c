/**
 * The vocabulary of a warm transfer: its phases, what happens to it (inputs), what it asks for
 * (actions) and what it reports (lifecycle facts). The machine in `warm-transfer-machine.ts` maps one to the other;
 * whoever drives it (`warm-transfer-driver.ts`) owns the legs, the audio and the webhooks.
 */

/** Where a warm transfer is. `failed` and `ended` are final. */
export type TransferPhase =
  | 'idle'
  | 'dialling'
  | 'ringing'
  | 'answered'
  | 'whispering'
  | 'awaiting_acceptance'
  | 'bridged'
  | 'failed'
  /** It was bridged, then one side hung up. */
  | 'ended'

/** Why a warm transfer failed: the caller is back with the agent (except `caller_hung_up`: nobody is left). */
export const TRANSFER_FAILURE_REASONS = ['no_answer', 'busy', 'declined', 'voicemail', 'failed', 'timeout', 'caller_hung_up'] as const

/** One of {@link TRANSFER_FAILURE_REASONS}. */
export type TransferFailureReason = (typeof TRANSFER_FAILURE_REASONS)[number]

/**
 * Call progress of the human's leg, as the carrier (or SIP) reports it; `machine` is a machine detection verdict;
 * `declined` is a refusal before answering (SIP 603 Decline; the carrier has no such status).
 */
export type HumanLegProgress = 'ringing' | 'answered' | 'busy' | 'no_answer' | 'declined' | 'failed' | 'machine'

/** Who hung up a bridged call (the session's end reason says it). */
export type TransferEndedBy = 'caller' | 'human'

/** What happens to a transfer. */
export type TransferInput =
  | { readonly type: 'progress'; readonly progress: HumanLegProgress }
  /** The whisper (with its acceptance prompt) finished playing to the human. */
  | { readonly type: 'whisper_done' }
  /** Keypad digits from the human's leg. */
  | { readonly type: 'dtmf'; readonly digits: string }
  | { readonly type: 'caller_hangup' }
  | { readonly type: 'human_hangup' }
  /** The driver's timer fired; the machine checks the deadline against its clock (a stale timer does nothing). */
  | { readonly type: 'timeout' }

/** What the driver must do, in the order given. */
export type TransferAction =
  /** Dial the human's leg. */
  | { readonly type: 'dial_human' }
  /** Speak `line` (if any) to the caller, then play hold audio until `stop_hold`; the agent stops listening. */
  | { readonly type: 'start_hold'; readonly line: string | undefined }
  | { readonly type: 'stop_hold' }
  /** Speak `text` to the human only (the caller must not hear it). */
  | { readonly type: 'speak_whisper'; readonly text: string }
  /** Connect the caller's and the human's audio (and mute the agent). */
  | { readonly type: 'bridge' }
  /** Hang up the human's leg if it is still up. */
  | { readonly type: 'stop_human_leg' }
  /** Give the caller back to the agent, which tells the backend `transfer.failed` with the reason. */
  | { readonly type: 'return_to_agent'; readonly reason: TransferFailureReason }
  /** A bridged call is over: hang up what is left and end the session, saying who hung up. */
  | { readonly type: 'end_session'; readonly endedBy: TransferEndedBy }
  /** Send the lifecycle webhook for `fact`. */
  | { readonly type: 'report'; readonly fact: TransferFact }

/** A lifecycle fact, timed in ms since the transfer started (the builders in `transfer-events.ts` make webhooks of them). */
export type TransferFact =
  | { readonly type: 'transfer.started'; readonly atMs: 0 }
  | { readonly type: 'transfer.answered'; readonly atMs: number }
  | { readonly type: 'transfer.connected'; readonly atMs: number; readonly answeredAtMs: number }
  | {
      readonly type: 'transfer.failed'
      readonly atMs: number
      readonly reason: TransferFailureReason
      /** The phase it failed in (`ringing`, `awaiting_acceptance`...). */
      readonly phase: TransferPhase
      /** Set when the human had answered. */
      readonly answeredAtMs: number | undefined
    }
