import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database, SessionRow } from './schema.js'
import { hashToken, newId, newSecret } from '../../core/ids.js'
import type { EndReason } from '../../core/end-reason.js'
import { liveLeases } from './leases.js'
import { chargeUsage } from './usage.js'

/** How long a client_session_key stays valid (SPEC: 1 hour). */
export const SESSION_KEY_TTL_MS = 60 * 60 * 1000

/** Telephony and connection details recorded on a session. */
export interface SessionOrigin {
  channel: 'browser' | 'carrier'
  direction?: string | null
  fromPhoneNumber?: string | null
  fromPhoneCountry?: string | null
  toPhoneNumber?: string | null
  toPhoneCountry?: string | null
  callSid?: string | null
  callStatus?: string | null
}

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

/**
 * Creates an authorized session holding a new client_session_key (stored hashed) and makes every older,
 * unused key of the conversation stop working. Returns the plain key once.
 */
export async function createAuthorizedSession(
  tx: Transaction<Database>,
  input: {
    organizationId: string
    agentId: string
    conversationId: string
    configOverride: unknown
    metadata: unknown
    origin: SessionOrigin
  },
): Promise<{ sessionId: string; key: string; expiresAt: Date }> {
  const now = Date.now()
  // Older keys of this conversation stop working; sessions that never connected end as superseded. The
  // hash stays so a late client is told its key was replaced rather than unknown.
  await tx
    .updateTable('sessions')
    .set({ status: 'ended', end_reason: 'superseded', lease_expires_at: null, updated_at: new Date(now) })
    .where('conversation_id', '=', input.conversationId)
    .where('status', '=', 'authorized')
    .execute()
  const key = newSecret('csk')
  const sessionId = newId('sess')
  const expiresAt = new Date(now + SESSION_KEY_TTL_MS)
  const o = input.origin
  await tx
    .insertInto('sessions')
    .values({
      id: sessionId,
      conversation_id: input.conversationId,
      agent_id: input.agentId,
      organization_id: input.organizationId,
      status: 'authorized',
      channel: o.channel,
      direction: o.direction ?? null,
      key_hash: hashToken(key),
      key_expires_at: expiresAt,
      config_override: input.configOverride === undefined ? null : JSON.stringify(input.configOverride),
      metadata: input.metadata === undefined ? null : JSON.stringify(input.metadata),
      call_sid: o.callSid ?? null,
      call_status: o.callStatus ?? null,
      from_phone_number: o.fromPhoneNumber ?? null,
      from_phone_country: o.fromPhoneCountry ?? null,
      to_phone_number: o.toPhoneNumber ?? null,
      to_phone_country: o.toPhoneCountry ?? null,
      updated_at: new Date(now),
    })
    .execute()
  await tx
    .updateTable('conversations')
    .set({ updated_at: new Date(now) })
    .where('id', '=', input.conversationId)
    .execute()
  return { sessionId, key, expiresAt }
}

/** Why a key could not be used. */
export type KeyProblem = 'unknown' | 'expired' | 'used'

/** Outcome of starting a session with its key. */
export type StartResult = { ok: true; row: SessionRow } | { ok: false; reason: KeyProblem | 'concurrency_limit' | 'insufficient_balance' }

/**
 * Consumes a key and takes a concurrency slot in one transaction. The organization row is locked first, so
 * the limit holds across any number of gateway processes on one database. A refused start leaves the key
 * usable (the client may retry once a slot frees up).
 */
export async function startSessionWithKey(
  db: Kysely<Database>,
  input: { key: string; leaseOwner: string; leaseTtlMs: number; ipAddress: string | null; countryCode: string | null },
): Promise<StartResult> {
  const keyHash = hashToken(input.key)
  return db.transaction().execute(async (tx) => {
    const session = await tx.selectFrom('sessions').selectAll().where('key_hash', '=', keyHash).executeTakeFirst()
    if (session === undefined) return { ok: false, reason: 'unknown' } as const
    if (session.key_used_at !== null || session.status !== 'authorized') return { ok: false, reason: 'used' } as const
    if (session.key_expires_at === null || session.key_expires_at.getTime() <= Date.now()) {
      return { ok: false, reason: 'expired' } as const
    }
    const org = await tx
      .selectFrom('organizations')
      .select(['balance', 'max_concurrent_sessions'])
      .where('id', '=', session.organization_id)
      .forUpdate()
      .executeTakeFirstOrThrow()
    if (org.balance !== null && Number(org.balance) <= 0) return { ok: false, reason: 'insufficient_balance' } as const
    // A carrier session may already hold its slot since the voice hook; it is not counted twice.
    const holdsLease = session.lease_expires_at !== null && session.lease_expires_at.getTime() > Date.now()
    if (!holdsLease && org.max_concurrent_sessions !== null) {
      const live = await liveLeases(tx, session.organization_id)
      if (live >= org.max_concurrent_sessions) return { ok: false, reason: 'concurrency_limit' } as const
    }
    const row = await tx
      .updateTable('sessions')
      .set({
        status: 'connected',
        key_used_at: sql<Date>`now()`,
        started_at: sql<Date>`now()`,
        ip_address: input.ipAddress,
        country_code: input.countryCode,
        lease_owner: input.leaseOwner,
        lease_expires_at: sql<Date>`now() + ${`${input.leaseTtlMs} milliseconds`}::interval`,
        updated_at: sql<Date>`now()`,
      })
      .where('id', '=', session.id)
      .where('key_used_at', 'is', null)
      .returningAll()
      .executeTakeFirst()
    if (row === undefined) return { ok: false, reason: 'used' } as const
    return { ok: true, row } as const
  })
}

/** Fields persisted when a session ends. */
export interface SessionEnd {
  endReason: EndReason
  transcriptionDurationSeconds: number | null
  ttsDurationSeconds: number | null
  latencyMs: number | null
  callStatus?: string | null
}

/**
 * Ends a session once: sets the end fields, releases its lease and charges usage from the organization's
 * balance (at `ratePerMinute` per connected minute). Returns the final row, or undefined if already ended.
 */
export async function endSession(
  db: Kysely<Database>,
  sessionId: string,
  end: SessionEnd,
  ratePerMinute: number,
): Promise<SessionRow | undefined> {
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable('sessions')
      .set({
        status: 'ended',
        ended_at: sql<Date>`now()`,
        duration_ms: sql<number>`case when started_at is null then null else floor(extract(epoch from (now() - started_at)) * 1000)::int end`,
        end_reason: end.endReason,
        transcription_duration_seconds: end.transcriptionDurationSeconds,
        tts_duration_seconds: end.ttsDurationSeconds,
        latency_ms: end.latencyMs,
        ...(end.callStatus !== undefined && { call_status: end.callStatus }),
        lease_expires_at: null,
        charged: true,
        updated_at: sql<Date>`now()`,
      })
      .where('id', '=', sessionId)
      .where('status', '!=', 'ended')
      .returningAll()
      .executeTakeFirst()
    if (row === undefined) return undefined
    await chargeUsage(tx, row, ratePerMinute)
    return row
  })
}

/** One turn of the transcript as stored. */
export interface TranscriptTurn {
  turnId: string
  timestamp: Date
  userMessage: string | null
  assistantMessage: string | null
  latencyMs: number | null
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
    })
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
