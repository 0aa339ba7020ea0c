/**
 * A warm transfer: the gateway dials a human as a second leg, holds the caller, whispers a brief to the
 * human, waits for acceptance, then bridges the two legs itself. This is the backend's `response.transfer` with
 * `mode: "warm"` as one checked value; its destination is a `TransferTarget`, checked by the same rules as a cold
 * transfer's. Pure: validated here once, then handed to the transfer as a value.
 */
import { parseTransferTarget, type TransferRequest, type TransferTarget } from './transfer-target.js'

/** How the human accepts: keypad 1 accepts and 2 declines (`dtmf`), or answering is accepting (`none`). */
export type WarmTransferAccept = 'dtmf' | 'none'

/** A validated warm transfer. */
export interface WarmTransferRequest {
  readonly target: TransferTarget
  /** Spoken to the human only, once they answer; undefined: nothing is said before acceptance is awaited. */
  readonly whisper: string | undefined
  /** Said to the caller before the hold audio; undefined: the hold audio starts at once. */
  readonly hold: string | undefined
  readonly accept: WarmTransferAccept
  /** Both legs transcribed while bridged, for the record (the transfer's entry in the session details). */
  readonly transcribe: boolean
  /** The caller's `data` events still reach the agent while the transfer runs; nothing else of the caller does. */
  readonly forwardData: boolean
  /** From dialling to acceptance (ringing, whisper and the wait for a key all count). */
  readonly timeoutMs: number
}

/** What a backend asked for, as it arrived (unchecked): the cold request's fields and the warm ones. */
export interface WarmTransferInput extends TransferRequest {
  readonly whisper?: string | undefined
  readonly hold?: string | undefined
  readonly accept?: string | undefined
  readonly transcribe?: boolean | undefined
  readonly forwardData?: boolean | undefined
  readonly timeoutS?: number | undefined
}

/** Bounds of `timeout_s`: long enough to ring a desk phone a few times, short enough that a caller is not held for ever. */
export const WARM_TRANSFER_TIMEOUT_S = { min: 5, max: 120, default: 30 } as const
/** Longest whisper: a brief the human hears in about a minute of speech, not a transcript. */
export const MAX_WHISPER_CHARS = 1000
/** Longest hold line: one or two sentences before the hold audio. */
export const MAX_HOLD_CHARS = 300

/** The request, or the problems with it (each a sentence for the error body's `details`), the target's among them. */
export function parseWarmTransferRequest(
  input: WarmTransferInput,
): { ok: true; request: WarmTransferRequest } | { ok: false; problems: string[] } {
  const target = parseTransferTarget(input)
  const problems = target.ok ? [] : [...target.problems]
  const whisper = spoken(input.whisper)
  const hold = spoken(input.hold)
  if (whisper !== undefined && whisper.length > MAX_WHISPER_CHARS) problems.push(`whisper: at most ${MAX_WHISPER_CHARS} characters`)
  if (hold !== undefined && hold.length > MAX_HOLD_CHARS) problems.push(`hold: at most ${MAX_HOLD_CHARS} characters`)
  const accept = input.accept ?? 'dtmf'
  if (accept !== 'dtmf' && accept !== 'none') problems.push(`accept: ${JSON.stringify(accept.slice(0, 40))} is neither "dtmf" nor "none"`)
  const { min, max } = WARM_TRANSFER_TIMEOUT_S
  const timeoutS = input.timeoutS ?? WARM_TRANSFER_TIMEOUT_S.default
  if (!Number.isFinite(timeoutS) || timeoutS < min || timeoutS > max) problems.push(`timeout_s: from ${min} to ${max} seconds`)
  if (problems.length > 0 || !target.ok) return { ok: false, problems }
  return {
    ok: true,
    request: {
      target: target.target,
      whisper,
      hold,
      accept: accept as WarmTransferAccept,
      timeoutMs: Math.round(timeoutS * 1000),
      transcribe: input.transcribe === true,
      forwardData: input.forwardData === true,
    },
  }
}

/** Text to speak, trimmed; blank text is no text (nothing to say rather than a silent utterance). */
function spoken(text: string | undefined): string | undefined {
  const trimmed = text?.trim()
  return trimmed === undefined || trimmed === '' ? undefined : trimmed
}
