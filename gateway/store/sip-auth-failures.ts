/**
 * Failed SIP digest answers per source and trunk, in the database so that every replica counts into one budget
 * and sees one block. The policy (how much credit, how long a block) is the caller's: a failure runs `step` on
 * the row's state with the row locked, so two replicas counting at once are ordered and neither loses the other's.
 */
import { sql, type Kysely } from 'kysely'
import type { Database } from './schema.js'

/** One (source, trunk)'s counting state; times in ms since the epoch. */
export interface AuthFailureState {
  /** Failures still allowed before a block (refilled over time by the policy). */
  readonly credit: number
  /** When `credit` was last computed. */
  readonly countedAt: number
  /** Blocks so far: each one lasts twice as long as the one before. */
  readonly strikes: number
  /** Refused until then; null when not blocked. */
  readonly blockedUntil: number | null
}

/** What the failures are counted by: the source as counted (an address, or an IPv6 /64) and the trunk ('' for none). */
export interface AuthFailureKey {
  readonly source: string
  readonly trunkId: string
}

/**
 * Counts one failure: `step` gets the row's state (undefined for the first failure) and returns the new one,
 * which is stored and returned.
 */
export async function recordSipAuthFailure(
  db: Kysely<Database>,
  key: AuthFailureKey,
  step: (previous: AuthFailureState | undefined) => AuthFailureState,
): Promise<AuthFailureState> {
  return db.transaction().execute(async (tx) => {
    // The first failure inserts; a second one at once waits on that insert, does nothing, and then counts on the
    // row it locks below, so neither is lost.
    const first = step(undefined)
    const inserted = await tx
      .insertInto('sip_auth_failures')
      .values({ source: key.source, trunk_id: key.trunkId, ...columns(first) })
      .onConflict((c) => c.columns(['source', 'trunk_id']).doNothing())
      .returning('source')
      .executeTakeFirst()
    if (inserted !== undefined) return first
    const row = await tx
      .selectFrom('sip_auth_failures')
      .selectAll()
      .where('source', '=', key.source)
      .where('trunk_id', '=', key.trunkId)
      .forUpdate()
      .executeTakeFirstOrThrow()
    const next = step({
      credit: Number(row.credit),
      countedAt: row.counted_at.getTime(),
      strikes: row.strikes,
      blockedUntil: row.blocked_until?.getTime() ?? null,
    })
    await tx
      .updateTable('sip_auth_failures')
      .set(columns(next))
      .where('source', '=', key.source)
      .where('trunk_id', '=', key.trunkId)
      .execute()
    return next
  })
}

function columns(state: AuthFailureState) {
  return {
    credit: state.credit,
    counted_at: new Date(state.countedAt),
    strikes: state.strikes,
    blocked_until: state.blockedUntil === null ? null : new Date(state.blockedUntil),
  }
}

/** The latest end of a block of `source` (any trunk) still running at `now`; undefined when it is not blocked. */
export async function sipAuthBlockedUntil(db: Kysely<Database>, source: string, now: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('sip_auth_failures')
    .select(sql<Date | null>`max(blocked_until)`.as('until'))
    .where('source', '=', source)
    .where('blocked_until', '>', new Date(now))
    .executeTakeFirst()
  return row?.until == null ? undefined : new Date(row.until).getTime()
}

/** Forgets a (source, trunk)'s failures and blocks: its right password was given. */
export async function resetSipAuthFailures(db: Kysely<Database>, key: AuthFailureKey): Promise<void> {
  await db.deleteFrom('sip_auth_failures').where('source', '=', key.source).where('trunk_id', '=', key.trunkId).execute()
}

/** Deletes rows with no failure since `before` and no block running then; how many went. */
export async function purgeSipAuthFailures(db: Kysely<Database>, before: number): Promise<number> {
  const at = new Date(before)
  const r = await db
    .deleteFrom('sip_auth_failures')
    .where('counted_at', '<', at)
    .where((w) => w.or([w('blocked_until', 'is', null), w('blocked_until', '<', at)]))
    .executeTakeFirst()
  return Number(r.numDeletedRows)
}
