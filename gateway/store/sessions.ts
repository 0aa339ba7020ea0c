/** Conversations, transcripts and reading a session; a session row's state is written by session-keys.ts and session-ends.ts only. */
import type { Kysely } from 'kysely'
import type { Database, StoredLatencyBreakdown, StoredTurnFailure } from './schema.js'
import { newId } from '../../core/ids.js'

/** A conversation owned by the organization, or undefined. */
export async function getConversation(db: Kysely<Database>, organizationId: string, id: string) {
  return db.selectFrom('conversations').selectAll().where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst()
}

/** Creates a conversation for an agent. */
export async function createConversation(db: Kysely<Database>, organizationId: string, agentId: string): Promise<string> {
  const id = newId('conv')
  await db.insertInto('conversations').values({ id, organization_id: organizationId, agent_id: agentId, updated_at: new Date() }).execute()
  return id
}

/** One turn of the transcript as stored. */
export interface TranscriptTurn {
  turnId: string
  timestamp: Date
  userMessage: string | null
  assistantMessage: string | null
  latencyMs: number | null
  /** Where `latencyMs` went; absent or null when the turn has none. */
  latencyBreakdown?: StoredLatencyBreakdown | null | undefined
  /** Why the turn failed; absent or null for a good turn. */
  failure?: StoredTurnFailure | null | undefined
  /** Why the caller's turn ended when it did; absent or null without one. */
  turnEnd?: string | null | undefined
}

/** Appends a turn to a session's transcript. */
export async function appendTranscript(
  db: Kysely<Database>,
  sessionId: string,
  conversationId: string,
  seq: number,
  turn: TranscriptTurn,
): Promise<void> {
  await db
    .insertInto('transcript_entries')
    .values({
      session_id: sessionId,
      conversation_id: conversationId,
      seq,
      turn_id: turn.turnId,
      timestamp: turn.timestamp,
      user_message: turn.userMessage,
      assistant_message: turn.assistantMessage,
      latency_ms: turn.latencyMs,
      latency_breakdown: turn.latencyBreakdown == null ? null : JSON.stringify(turn.latencyBreakdown),
      failure: turn.failure == null ? null : JSON.stringify(turn.failure),
      turn_end: turn.turnEnd ?? null,
    })
    // A retry of a write whose answer was lost with the connection: the turn is there already.
    .onConflict((oc) => oc.columns(['session_id', 'seq']).doNothing())
    .execute()
}

/** A session's transcript, in order. */
export async function sessionTranscript(db: Kysely<Database>, sessionId: string) {
  return db.selectFrom('transcript_entries').selectAll().where('session_id', '=', sessionId).orderBy('seq').execute()
}

/** The conversation's history across its sessions (for resuming), oldest first, at most `limit` turns. */
export async function conversationHistory(db: Kysely<Database>, conversationId: string, limit: number) {
  const rows = await db
    .selectFrom('transcript_entries')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()
  return rows.reverse()
}

/** One session of the organization's agent, or undefined. */
export async function getSessionRow(db: Kysely<Database>, organizationId: string, agentId: string, sessionId: string) {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('id', '=', sessionId)
    .where('agent_id', '=', agentId)
    .where('organization_id', '=', organizationId)
    .executeTakeFirst()
}
