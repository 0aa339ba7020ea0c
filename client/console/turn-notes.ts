/**
 * What the console says about a turn that has no latency to draw: a failed or silent turn (its cause, how long
 * the caller waited and what they heard instead), or why nothing was measured. Pure: no DOM, tested in Node.
 */
import type { TranscriptEntry, TurnFailure } from './types.js'

/** A turn's note: `failed` rows are marked; `unmeasured` ones say why there is no latency. */
export interface TurnNote {
  kind: 'failed' | 'unmeasured'
  /** The cause in words (failed), or the reason nothing was measured. */
  cause: string
  /** `caller waited 2.4 s, heard: 'Sorry, …'` (failed turns only). */
  waited?: string
  /** Everything on one line, as a tooltip or a screen reader gives it. */
  text: string
}

/** The longest backend detail or fallback text shown; the rest is cut with an ellipsis. */
const MAX_SHOWN = 160

/** `2400` -> `2.4 s` (one decimal: the caller's silence is felt in tenths). */
export function seconds(ms: number): string {
  // Rounded in tenths first: 350 ms is 0.4 s, where (0.35).toFixed(1) would say 0.3.
  return `${(Math.round(Math.max(0, ms) / 100) / 10).toFixed(1)} s`
}

function cut(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > MAX_SHOWN ? `${line.slice(0, MAX_SHOWN)}…` : line
}

/** Durations of a second or more in a detail (`no reply in 3000 ms`) read in seconds, like the rest of the note. */
function readableDetail(detail: string): string {
  return cut(detail).replace(/\b(\d{4,})\s?ms\b/g, (_, ms: string) => seconds(Number(ms)))
}

const CAUSES: Record<string, string> = {
  timeout: 'backend timed out',
  connect_refused: 'backend refused the connection',
  connect_failed: 'could not connect to the backend',
  invalid_stream: 'backend sent an invalid reply stream',
  stream_broken: 'backend reply stream broke off',
  empty_reply: 'backend replied with nothing to say',
  backend_error: 'backend reported an error',
  tts_failed: 'text-to-speech failed',
}

/** The cause in words: `http_500` -> `backend answered HTTP 500`; an unknown cause is shown as it came. */
export function causeInWords(failure: Pick<TurnFailure, 'cause' | 'detail'>): string {
  const http = /^http_(\d{3})$/.exec(failure.cause)
  const base = http !== null ? `backend answered HTTP ${http[1]}` : (CAUSES[failure.cause] ?? `failed: ${failure.cause}`)
  const detail = failure.detail === null ? '' : readableDetail(failure.detail)
  return detail === '' ? base : `${base} (${detail})`
}

/** `caller waited 2.4 s, heard: 'Sorry, …'`, or `… in silence` when nothing was spoken instead. */
export function waitedInWords(failure: Pick<TurnFailure, 'waited_ms' | 'heard'>): string {
  const heard = failure.heard === null ? '' : cut(failure.heard)
  return heard === ''
    ? `caller waited ${seconds(failure.waited_ms)} in silence`
    : `caller waited ${seconds(failure.waited_ms)}, heard: '${heard}'`
}

/** Why a turn without a failure has no latency, from what it holds. */
function unmeasuredReason(entry: TranscriptEntry): string {
  if (entry.user_message === null && entry.assistant_message !== null) return 'agent spoke first (welcome): no caller turn to time'
  if (entry.user_message !== null && entry.assistant_message === null) {
    return 'no reply: the call ended, or the caller spoke again, before the agent answered'
  }
  return 'no latency measured for this turn'
}

/**
 * The note for a turn, or null when it has latency stages to draw and nothing failed. A failed turn is always a
 * note (with its bars drawn too when it has some), never "no latency".
 */
export function turnNote(entry: TranscriptEntry): TurnNote | null {
  const failure = entry.failure ?? null
  if (failure !== null) {
    const cause = causeInWords(failure)
    const waited = waitedInWords(failure)
    return { kind: 'failed', cause, waited, text: `${cause} · ${waited}` }
  }
  const stages = (entry.latency_breakdown?.stages ?? []).filter((s) => s.name !== 'user_speech_end')
  if (entry.latency_ms !== null && stages.length > 0) return null
  const cause = unmeasuredReason(entry)
  return { kind: 'unmeasured', cause, text: cause }
}
