import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely'
import type { EndReason } from '../../core/end-reason.js'
import type { Database, SessionStatus } from './schema.js'

/** One row of the console's session list. */
export interface SessionListItem {
  session_id: string
  agent_id: string
  agent_name: string
  conversation_id: string
  channel: 'browser' | 'carrier' | 'sip'
  direction: string | null
  status: SessionStatus
  from_phone_number: string | null
  to_phone_number: string | null
  started_at: string | null
  ended_at: string | null
  duration_ms: number | null
  turns: number
  /** Turns that failed (a transcript entry with a `failure`). */
  failed_turns: number
  latency_ms: number | null
  end_reason: string | null
  recording_status: string
}

/** Which sessions: connected now (`live`), ended, or both. */
export type SessionListFilter = 'live' | 'ended' | 'all'

/**
 * A place in the list: the row's list time (its start, or its creation when it never started) as the database
 * holds it (microseconds, UTC, `2026-11-25T15:56:29.123456Z`) and its id. Rows come in (time, id) descending order.
 */
export interface SessionListPosition {
  at: string
  id: string
}

/** What to list; every given criterion must hold (AND). Text criteria are matched as described on each. */
export interface SessionListQuery {
  filter: SessionListFilter
  /** At most this many rows. */
  limit: number
  /** Only sessions with at least one failed turn. */
  failedTurns?: boolean | undefined
  /** Only these end reasons (ended sessions). */
  endReasons?: readonly EndReason[] | undefined
  /** Digits (1-15) found anywhere in the caller's or the called number. */
  phoneDigits?: string | undefined
  conversationId?: string | undefined
  sessionId?: string | undefined
  /** The agent's id, or part of its name (case-insensitive). */
  agent?: string | undefined
  /**
   * Free text: a session, conversation, agent id or carrier call id (exact), part of an agent's name, or, when
   * `digits` is given, those digits in either number.
   */
  text?: { value: string; digits?: string | undefined } | undefined
  /** Rows after this place (the `next` of the page before). */
  after?: SessionListPosition | undefined
}

/** A page of the list, and where the next one starts (undefined on the last page). */
export interface SessionListPage {
  sessions: SessionListItem[]
  next: SessionListPosition | undefined
}

/** The list time: when the session started, or when it was created if it never did (an unanswered outbound call). */
const LISTED_AT = sql<Date>`coalesce(s.started_at, s.created_at)`
/** Ids compare byte by byte whatever the database's collation, so the order (and a test of it) is the same everywhere. */
const ID_ORDER = sql<string>`s.id collate "C"`

/** `%`, `_` and `\` taken literally in a LIKE pattern (backslash is the default escape). */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`)
}

type Eb = ExpressionBuilder<Database & { s: Database['sessions']; a: Database['agents'] }, 's' | 'a'>

/** The session's failed turns (served by the partial index of turns with a failure). */
function failedTurns(eb: Eb) {
  return eb.selectFrom('transcript_entries as f').whereRef('f.session_id', '=', 's.id').where('f.failure', 'is not', null)
}

function phoneMatch(eb: Eb, digits: string): Expression<SqlBool> {
  const pattern = `%${digits}%`
  return eb.or([eb('s.from_phone_number', 'like', pattern), eb('s.to_phone_number', 'like', pattern)])
}

function agentMatch(eb: Eb, agent: string): Expression<SqlBool> {
  return eb.or([eb('s.agent_id', '=', agent), eb('a.name', 'ilike', `%${likeLiteral(agent)}%`)])
}

/**
 * A page of an organization's sessions, newest first by list time (then id), matching `query`. Live sessions are
 * the connected rows (whichever replica runs them), ended ones those with an end; a session that was only
 * authorized is never listed. The order is stable under inserts, so a page's `next` never skips or repeats a row.
 */
export async function listSessions(db: Kysely<Database>, organizationId: string, query: SessionListQuery): Promise<SessionListPage> {
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
    .select(sql<string>`to_char(${LISTED_AT} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('listed_at'))
    .select((eb) =>
      eb.selectFrom('transcript_entries as t').whereRef('t.session_id', '=', 's.id').select(sql<number>`count(*)`.as('n')).as('turns'),
    )
    .select((eb) => failedTurns(eb).select(sql<number>`count(*)`.as('n')).as('failed_turns'))
    .where('s.organization_id', '=', organizationId)
  if (query.filter === 'live') q = q.where('s.status', '=', 'connected')
  else if (query.filter === 'ended') q = q.where('s.status', '=', 'ended')
  else q = q.where('s.status', 'in', ['connected', 'ended'])
  if (query.endReasons !== undefined && query.endReasons.length > 0) q = q.where('s.end_reason', 'in', [...query.endReasons])
  if (query.failedTurns === true) q = q.where((eb) => eb.exists(failedTurns(eb).select(sql<number>`1`.as('one'))))
  const { phoneDigits, conversationId, sessionId, agent, text, after } = query
  if (phoneDigits !== undefined) q = q.where((eb) => phoneMatch(eb, phoneDigits))
  if (conversationId !== undefined) q = q.where('s.conversation_id', '=', conversationId)
  if (sessionId !== undefined) q = q.where('s.id', '=', sessionId)
  if (agent !== undefined) q = q.where((eb) => agentMatch(eb, agent))
  if (text !== undefined) {
    q = q.where((eb) =>
      eb.or([
        eb('s.id', '=', text.value),
        eb('s.conversation_id', '=', text.value),
        eb('s.call_sid', '=', text.value),
        agentMatch(eb, text.value),
        ...(text.digits !== undefined ? [phoneMatch(eb, text.digits)] : []),
      ]),
    )
  }
  if (after !== undefined) q = q.where(sql<SqlBool>`(${LISTED_AT}, ${ID_ORDER}) < (${after.at}::timestamptz, ${after.id})`)
  // One row more than asked tells whether another page follows.
  const rows = await q
    .orderBy(LISTED_AT, 'desc')
    .orderBy(ID_ORDER, 'desc')
    .limit(query.limit + 1)
    .execute()
  const page = rows.slice(0, query.limit)
  const last = page.at(-1)
  return {
    sessions: page.map((r) => ({
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
      failed_turns: Number(r.failed_turns ?? 0),
      latency_ms: r.latency_ms === null ? null : Number(r.latency_ms),
      end_reason: r.end_reason,
      recording_status: r.recording_status,
    })),
    next: rows.length > query.limit && last !== undefined ? { at: last.listed_at, id: last.id } : undefined,
  }
}
