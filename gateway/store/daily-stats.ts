import { sql, type Kysely } from 'kysely'
import type { Database } from './schema.js'

/** One UTC day of an organization's traffic: usage and turn latency percentiles. */
export interface DailyStats {
  /** `YYYY-MM-DD` (UTC). */
  date: string
  sessions: number
  /** Connected minutes of the sessions that started that day (ended ones; live ones count when they end). */
  minutes: number
  /** Turns with a measured latency. */
  turns: number
  latency_p50_ms: number | null
  latency_p90_ms: number | null
  latency_p99_ms: number | null
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Math.round(Number(v) * 10) / 10)

/**
 * The last `days` UTC days (the current one included), every day present even without traffic, so a chart's axis is
 * continuous. Percentiles are Postgres' `percentile_cont` over the turns' `latency_ms`.
 */
export async function dailyStats(db: Kysely<Database>, organizationId: string, days: number, now = new Date()): Promise<DailyStats[]> {
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1))
  const start = new Date(end.getTime() - days * 86_400_000)
  const usage = await sql<{ day: string; sessions: string | number; ms: string | number | null }>`
    select to_char(started_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*) as sessions, sum(duration_ms) as ms
    from sessions
    where organization_id = ${organizationId} and started_at >= ${start} and started_at < ${end}
    group by 1`.execute(db)
  const latency = await sql<{ day: string; turns: string | number; p50: unknown; p90: unknown; p99: unknown }>`
    select to_char(t.timestamp at time zone 'UTC', 'YYYY-MM-DD') as day, count(*) as turns,
      percentile_cont(0.5) within group (order by t.latency_ms) as p50,
      percentile_cont(0.9) within group (order by t.latency_ms) as p90,
      percentile_cont(0.99) within group (order by t.latency_ms) as p99
    from transcript_entries t join sessions s on s.id = t.session_id
    where s.organization_id = ${organizationId} and t.latency_ms is not null and t.timestamp >= ${start} and t.timestamp < ${end}
    group by 1`.execute(db)
  const byDay = new Map<string, DailyStats>()
  for (let t = start.getTime(); t < end.getTime(); t += 86_400_000) {
    const date = new Date(t).toISOString().slice(0, 10)
    byDay.set(date, { date, sessions: 0, minutes: 0, turns: 0, latency_p50_ms: null, latency_p90_ms: null, latency_p99_ms: null })
  }
  for (const u of usage.rows) {
    const d = byDay.get(u.day)
    if (d === undefined) continue
    d.sessions = Number(u.sessions)
    d.minutes = Math.round((Number(u.ms ?? 0) / 60_000) * 100) / 100
  }
  for (const l of latency.rows) {
    const d = byDay.get(l.day)
    if (d === undefined) continue
    d.turns = Number(l.turns)
    d.latency_p50_ms = num(l.p50)
    d.latency_p90_ms = num(l.p90)
    d.latency_p99_ms = num(l.p99)
  }
  return [...byDay.values()]
}
