/**
 * Commands one replica sends to the replica that runs a session, as the text of a database notification.
 * Pure: no I/O. A payload carries ids and a reason, never a secret (NOTIFY payloads are visible to every
 * connection that listens on the database), and stays far below NOTIFY's 8000-byte limit.
 */
import type { EndReason } from '../../core/end-reason.js'
import { MACHINE_VERDICTS, type MachineVerdict } from '../../core/machine-verdict.js'

/** End reasons another replica may ask for: the ones an outside action (carrier, API) can cause. */
export const REMOTE_END_REASONS = ['caller_hangup', 'hangup'] as const satisfies readonly EndReason[]

/** A reason another replica may give for ending a session. */
export type RemoteEndReason = (typeof REMOTE_END_REASONS)[number]

/** A command addressed to whichever replica runs `sessionId`. */
export type SessionCommand =
  | { readonly kind: 'end'; readonly sessionId: string; readonly reason: RemoteEndReason }
  /** The carrier's answering machine detection decided (the callback may land on any replica). */
  | { readonly kind: 'machine_verdict'; readonly sessionId: string; readonly verdict: MachineVerdict }

const VERSION = 1
const ID = /^[A-Za-z0-9_-]{1,64}$/

/** The notification text of a command. */
export function encodeSessionCommand(c: SessionCommand): string {
  if (c.kind === 'machine_verdict') return JSON.stringify({ v: VERSION, kind: c.kind, session_id: c.sessionId, verdict: c.verdict })
  return JSON.stringify({ v: VERSION, kind: c.kind, session_id: c.sessionId, reason: c.reason })
}

/** The command in a notification's text; a reason instead for anything this version does not know. */
export function decodeSessionCommand(text: string): { ok: true; command: SessionCommand } | { ok: false; reason: string } {
  let j: unknown
  try {
    j = JSON.parse(text)
  } catch {
    return { ok: false, reason: 'not JSON' }
  }
  if (typeof j !== 'object' || j === null) return { ok: false, reason: 'not an object' }
  const o = j as Record<string, unknown>
  if (o.v !== VERSION) return { ok: false, reason: `unknown version ${String(o.v)}` }
  if (o.kind !== 'end' && o.kind !== 'machine_verdict') return { ok: false, reason: `unknown kind ${String(o.kind)}` }
  if (typeof o.session_id !== 'string' || !ID.test(o.session_id)) return { ok: false, reason: 'bad session_id' }
  if (o.kind === 'machine_verdict') {
    const verdict = MACHINE_VERDICTS.find((v) => v === o.verdict)
    if (verdict === undefined) return { ok: false, reason: 'bad verdict' }
    return { ok: true, command: { kind: 'machine_verdict', sessionId: o.session_id, verdict } }
  }
  const reason = REMOTE_END_REASONS.find((r) => r === o.reason)
  if (reason === undefined) return { ok: false, reason: 'bad reason' }
  return { ok: true, command: { kind: 'end', sessionId: o.session_id, reason } }
}
