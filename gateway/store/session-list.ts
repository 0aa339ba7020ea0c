import { sql, type Kysely } from 'kysely'
import type { Database, SessionStatus } from './schema.js'

/** One row of the console's session list. */
export interface SessionListItem {
  session_id: string
  agent_id: string
  agent_name: string
  conversation_id: string
  channel: 'browser' | 'carrier'
  direction: string | null
  status: SessionStatus
  from_phone_number: string | null
  to_phone_number: string | null
  started_at: string | null
  ended_at: string | null
  duration_ms: number | null
  turns: number
  latency_ms: number | null
  end_reason: string | null
  recording_status: string
}

/** Which sessions: connected now (`live`), ended, or both. */
export type SessionListFilter = 'live' | 'ended' | 'all'

/**
 * An organization's sessions, newest first: live ones are the connected rows (whichever replica runs them),
 * ended ones those with an end. At most `limit` rows.
 */
export async function listSessions(
  db: Kysely<Database>,
  organizationId: string,
  opts: { filter: SessionListFilter; limit: number },
): Promise<SessionListItem[]> {
  let q = db
    .selectFrom('sessions as s')
    .innerJoin('agents as a', 'a.id', 's.agent_id')
    .select([
      's.id',
      's.agent_id',
      'a.name as agent_name',
      's.conversation_id',
      's.channel',
      's.direction',
      's.status',
      's.from_phone_number',
      's.to_phone_number',
      's.started_at',
      's.ended_at',
      's.duration_ms',
      's.latency_ms',
      's.end_reason',
      's.recording_status',
    ])
    .select((eb) =>
      eb.selectFrom('transcript_entries as t').whereRef('t.session_id', '=', 's.id').select(sql<number>`count(*)`.as('n')).as('turns'),
    )
    .where('s.organization_id', '=', organizationId)
  if (opts.filter === 'live') q = q.where('s.status', '=', 'connected')
  else if (opts.filter === 'ended') q = q.where('s.status', '=', 'ended')
  else q = q.where('s.status', 'in', ['connected', 'ended'])
  const rows = await q.orderBy('s.created_at', 'desc').orderBy('s.id').limit(opts.limit).execute()
  return rows.map((r) => ({
    session_id: r.id,
    agent_id: r.agent_id,
    agent_name: r.agent_name,
    conversation_id: r.conversation_id,
    channel: r.channel,
    direction: r.direction,
    status: r.status,
    from_phone_number: r.from_phone_number,
    to_phone_number: r.to_phone_number,
    started_at: r.started_at?.toISOString() ?? null,
    ended_at: r.ended_at?.toISOString() ?? null,
    duration_ms: r.duration_ms === null ? null : Number(r.duration_ms),
    turns: Number(r.turns ?? 0),
    latency_ms: r.latency_ms === null ? null : Number(r.latency_ms),
    end_reason: r.end_reason,
    recording_status: r.recording_status,
  }))
}
