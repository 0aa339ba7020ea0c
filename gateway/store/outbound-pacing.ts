/**
 * Outbound dial slots per organization, so calls reach the carrier no faster than its account allows whichever
 * replica places them: taking a slot is one UPDATE of the organization row, and the row lock orders replicas.
 */
import { sql, type Kysely } from 'kysely'
import type { Database } from './schema.js'
import { DEFAULT_OUTBOUND_CALLS_PER_SECOND } from './organizations.js'

/**
 * A slot taken (dial at this moment, Unix ms by the database's clock), or the queue is full (retry after this
 * long). Replicas compare it with their own clocks, so they need them synchronised (NTP), as Postgres servers do.
 */
export type DialSlot = { ok: true; dialAtEpochMs: number } | { ok: false; retryAfterMs: number }

/**
 * Takes the organization's next dial slot unless it lies `maxWaitMs` or more ahead (the queue's bound). Slots are
 * `1 / outbound_calls_per_second` apart; times are the database's, so replicas' clocks do not matter.
 */
export async function takeDialSlot(db: Kysely<Database>, organizationId: string, maxWaitMs: number): Promise<DialSlot> {
  const rate = sql`coalesce(outbound_calls_per_second, ${DEFAULT_OUTBOUND_CALLS_PER_SECOND}::real)::double precision`
  const free = sql`greatest(now(), coalesce(outbound_next_slot_at, now()))`
  const taken = await db
    .updateTable('organizations')
    .set({ outbound_next_slot_at: sql`${free} + make_interval(secs => 1.0 / ${rate})` })
    .where('id', '=', organizationId)
    .where(sql<boolean>`${free} < now() + make_interval(secs => ${maxWaitMs / 1000}::double precision)`)
    .returning(sql<number>`extract(epoch from (outbound_next_slot_at - make_interval(secs => 1.0 / ${rate}))) * 1000`.as('dial_at'))
    .executeTakeFirst()
  if (taken !== undefined) return { ok: true, dialAtEpochMs: Number(taken.dial_at) }
  const ahead = await db
    .selectFrom('organizations')
    .select([sql<number>`extract(epoch from (${free} - now())) * 1000`.as('ahead_ms'), sql<number>`1000.0 / ${rate}`.as('interval_ms')])
    .where('id', '=', organizationId)
    .executeTakeFirst()
  // Room comes back once the queue's head has moved past the bound: one slot after that.
  const retryAfterMs = ahead === undefined ? 1000 : Number(ahead.ahead_ms) - maxWaitMs + Number(ahead.interval_ms)
  return { ok: false, retryAfterMs: Math.max(1000, retryAfterMs) }
}

/** Past the gate (dial now; `at` is the time recorded, by the database's clock), or how long is left. */
export type DialGate = { passed: true; at: Date } | { passed: false; leftMs: number }

/**
 * The floor between two dials of an organization, whichever replicas they come from: records this dial now
 * unless the last one was less than an interval ago, in which case it answers how long is left. The time is
 * taken after the row lock is granted, so a dial that was held up still pushes the next one back.
 */
export async function passDialGate(db: Kysely<Database>, organizationId: string): Promise<DialGate> {
  const rate = sql`coalesce(outbound_calls_per_second, ${DEFAULT_OUTBOUND_CALLS_PER_SECOND}::real)::double precision`
  const passed = await db
    .updateTable('organizations')
    .set({ outbound_last_dial_at: sql`clock_timestamp()` })
    .where('id', '=', organizationId)
    .where(
      sql<boolean>`(outbound_last_dial_at is null or outbound_last_dial_at <= clock_timestamp() - make_interval(secs => 1.0 / ${rate}))`,
    )
    .returning('outbound_last_dial_at')
    .executeTakeFirst()
  if (passed?.outbound_last_dial_at != null) return { passed: true, at: new Date(passed.outbound_last_dial_at) }
  const left = await db
    .selectFrom('organizations')
    .select(
      sql<number>`extract(epoch from (outbound_last_dial_at + make_interval(secs => 1.0 / ${rate}) - clock_timestamp())) * 1000`.as('ms'),
    )
    .where('id', '=', organizationId)
    .executeTakeFirst()
  // At least 1 ms, so a caller that sleeps and asks again cannot spin.
  return { passed: false, leftMs: left === undefined ? 1 : Math.max(1, Number(left.ms)) }
}
