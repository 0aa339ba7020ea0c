/**
 * A session's warm transfers on its row (`sessions.transfers`): each lifecycle fact of an attempt updates
 * the list, so the session details and the console show the legs, their timings and why one failed.
 */
import type { Kysely } from 'kysely'
import type { Database, StoredTransfer, StoredTransferLine } from './schema.js'

/** A fact of the attempt under way, as the transfer reports it (its times in ms since the attempt started). */
export type TransferRecordFact =
  | { readonly type: 'transfer.started' }
  | { readonly type: 'transfer.answered'; readonly atMs: number }
  | { readonly type: 'transfer.connected'; readonly atMs: number }
  | { readonly type: 'transfer.failed'; readonly atMs: number; readonly reason: string; readonly phase: string }

/** At most this many attempts are kept per session (the oldest go first): a backend retrying forever stays bounded. */
export const MAX_TRANSFERS_KEPT = 20

/** The list with `fact` applied: a start appends an attempt, the other facts complete the last one. Pure. */
export function withTransferFact(list: readonly StoredTransfer[], fact: TransferRecordFact, to: string, at: Date): StoredTransfer[] {
  if (fact.type === 'transfer.started') {
    return [...list, { mode: 'warm' as const, to, started_at: at.toISOString() }].slice(-MAX_TRANSFERS_KEPT)
  }
  const last = list.at(-1)
  if (last === undefined) return [...list]
  const done: StoredTransfer =
    fact.type === 'transfer.answered'
      ? { ...last, answered_after_ms: fact.atMs }
      : fact.type === 'transfer.connected'
        ? { ...last, connected_after_ms: fact.atMs }
        : { ...last, failed_after_ms: fact.atMs, failed_reason: fact.reason, failed_in: fact.phase }
  return [...list.slice(0, -1), done]
}

/** Applies `fact` to the session's stored list. */
export async function recordTransferFact(
  db: Kysely<Database>,
  sessionId: string,
  fact: TransferRecordFact,
  to: string,
  at: Date,
): Promise<void> {
  await updateTransfers(db, sessionId, (list) => withTransferFact(list, fact, to, at))
}

/** Rewrites the session's list with `change`, the row locked while it is read and written. */
async function updateTransfers(
  db: Kysely<Database>,
  sessionId: string,
  change: (list: readonly StoredTransfer[]) => StoredTransfer[],
): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const row = await tx.selectFrom('sessions').select('transfers').where('id', '=', sessionId).forUpdate().executeTakeFirst()
    if (row === undefined) return
    await tx
      .updateTable('sessions')
      .set({ transfers: JSON.stringify(change(row.transfers ?? [])) })
      .where('id', '=', sessionId)
      .execute()
  })
}

/** Lines of a bridged transcript kept per attempt, and the longest line: the record stays bounded. */
export const MAX_TRANSFER_LINES = 200
export const MAX_TRANSFER_LINE_CHARS = 2000

/** The list with `line` added to the last attempt's transcript (past the bound, lines are dropped). Pure. */
export function withTransferLine(list: readonly StoredTransfer[], line: StoredTransferLine): StoredTransfer[] {
  const last = list.at(-1)
  if (last === undefined || (last.transcript?.length ?? 0) >= MAX_TRANSFER_LINES) return [...list]
  const kept = { ...line, text: line.text.slice(0, MAX_TRANSFER_LINE_CHARS) }
  return [...list.slice(0, -1), { ...last, transcript: [...(last.transcript ?? []), kept] }]
}

/** Adds a bridged leg's line to the session's last transfer attempt. */
export async function recordTransferLine(db: Kysely<Database>, sessionId: string, line: StoredTransferLine): Promise<void> {
  await updateTransfers(db, sessionId, (list) => withTransferLine(list, line))
}
