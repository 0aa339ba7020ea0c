/**
 * A session row's one-time key and its start: issuing the key (authorized), starting the session with it
 * (connected, the concurrency lease taken), re-keying a call still waiting for its stream, and ending keys never
 * used. With session-ends.ts, the only writer of a row's `status`, `end_reason`, `ended_at` and the release of
 * its concurrency lease, so the rules of its state machine hold in one place.
 *
 *   authorized --start with key--> connected --end--> ended
 *   authorized --superseded (a newer key, a revoked link) | end waiting | lease expired--> ended      (re-keying keeps it authorized)
 *
 * Every end goes through `endedRow` (session-ends.ts): status `ended`, the end time and reason, the duration, the
 * lease released and usage settled.
 */
import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database, SessionRow } from './schema.js'
import { hashToken, newId, newSecret } from '../../core/ids.js'
import { atConcurrencyLimit } from './leases.js'
import { balanceUsedUp } from './organizations.js'
import { endedRow } from './session-ends.js'

/** How long a client_session_key stays valid (SPEC: 1 hour). */
export const SESSION_KEY_TTL_MS = 60 * 60 * 1000

/** Telephony and connection details recorded on a session. */
export interface SessionOrigin {
  channel: 'browser' | 'carrier' | 'sip'
  direction?: string | null
  fromPhoneNumber?: string | null
  fromPhoneCountry?: string | null
  toPhoneNumber?: string | null
  toPhoneCountry?: string | null
  callSid?: string | null
  callStatus?: string | null
  /** The campaign contact an outbound call is placed for: written with the session, so no crash splits them. */
  campaignContactId?: string | null
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
    /** The agent link that authorized it (its revocation ends the key if still unused). */
    agentLinkId?: string | undefined
  },
): Promise<{ sessionId: string; key: string; expiresAt: Date }> {
  const now = Date.now()
  await supersedeUnusedKeys(tx, input.conversationId)
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
      agent_link_id: input.agentLinkId ?? null,
      config_override: input.configOverride === undefined ? null : JSON.stringify(input.configOverride),
      metadata: input.metadata === undefined ? null : JSON.stringify(input.metadata),
      call_sid: o.callSid ?? null,
      call_status: o.callStatus ?? null,
      campaign_contact_id: o.campaignContactId ?? null,
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

/**
 * Older keys of a conversation stop working: sessions that never connected end as superseded. The hash stays
 * so a late client is told its key was replaced rather than unknown.
 */
async function supersedeUnusedKeys(tx: Transaction<Database>, conversationId: string): Promise<void> {
  await tx
    .updateTable('sessions')
    .set(endedRow('superseded', 'undated'))
    .where('conversation_id', '=', conversationId)
    .where('status', '=', 'authorized')
    .execute()
}

/**
 * A revoked agent link's keys that never connected stop working: their sessions end as `superseded` (undated,
 * nothing charged, no webhook: nothing began) and the key's time is cut to now, so a late client is told its key
 * expired. Sessions the link's keys already started go on. Returns how many keys ended.
 */
export async function endUnusedLinkKeys(tx: Transaction<Database>, agentLinkId: string): Promise<number> {
  const rows = await tx
    .updateTable('sessions')
    .set({ ...endedRow('superseded', 'undated'), key_expires_at: sql<Date>`least(key_expires_at, now())` })
    .where('agent_link_id', '=', agentLinkId)
    .where('status', '=', 'authorized')
    .returning('id')
    .execute()
  return rows.length
}

/** Why a key could not be used. */
export type KeyProblem = 'unknown' | 'expired' | 'used'

/** Outcome of starting a session with its key. */
export type StartResult =
  | { ok: true; row: SessionRow }
  | { ok: false; reason: KeyProblem | 'concurrency_limit' | 'insufficient_balance' | 'shutting_down' }

/** The key's problem, if any, as its row stands. */
function keyProblem(session: Pick<SessionRow, 'key_used_at' | 'status' | 'key_expires_at'>): KeyProblem | undefined {
  if (session.key_used_at !== null) return 'used'
  // An unused key past its time is expired whatever ended its row (a revoked link cuts its keys' time short).
  if (session.key_expires_at === null || session.key_expires_at.getTime() <= Date.now()) return 'expired'
  if (session.status !== 'authorized') return 'used'
  return undefined
}

/** A carrier session may already hold its slot since the voice hook; it is not counted twice. */
function holdsLease(session: Pick<SessionRow, 'lease_expires_at'>): boolean {
  return session.lease_expires_at !== null && session.lease_expires_at.getTime() > Date.now()
}

/**
 * Consumes a key and takes a concurrency slot in one transaction. The organization row is locked first, so
 * the limit holds across any number of gateway processes on one database. A refused start leaves the key
 * usable (the client may retry once a slot frees up).
 *
 * A refusal never waits for that lock: the key and the limit are first checked without it, so a start over
 * the limit is refused at once even while another process (stalled, paused, starved of CPU) holds the lock in
 * the middle of its own admission. The check without the lock can only see too many live sessions where a
 * concurrent end just freed one (the client retries); seeing too few, it goes on to the locked check, which
 * decides.
 */
export async function startSessionWithKey(
  db: Kysely<Database>,
  input: {
    key: string
    leaseOwner: string
    leaseTtlMs: number
    ipAddress: string | null
    countryCode: string | null
    /** Start only a session that already holds its slot (a carrier call admitted before a drain began). */
    onlyHeldSlot?: boolean
  },
): Promise<StartResult> {
  const keyHash = hashToken(input.key)
  const seen = await db
    .selectFrom('sessions')
    .innerJoin('organizations', 'organizations.id', 'sessions.organization_id')
    .select([
      'sessions.status',
      'sessions.key_used_at',
      'sessions.key_expires_at',
      'sessions.lease_expires_at',
      'sessions.organization_id',
      'organizations.balance',
      'organizations.max_concurrent_sessions',
    ])
    .where('sessions.key_hash', '=', keyHash)
    .executeTakeFirst()
  if (seen === undefined) return { ok: false, reason: 'unknown' }
  const problem = keyProblem(seen)
  if (problem !== undefined) return { ok: false, reason: problem }
  if (input.onlyHeldSlot === true && !holdsLease(seen)) return { ok: false, reason: 'shutting_down' }
  if (balanceUsedUp(seen)) return { ok: false, reason: 'insufficient_balance' }
  if (!holdsLease(seen) && (await atConcurrencyLimit(db, seen.organization_id, seen.max_concurrent_sessions))) {
    return { ok: false, reason: 'concurrency_limit' }
  }
  return db.transaction().execute(async (tx) => {
    const session = await tx.selectFrom('sessions').selectAll().where('key_hash', '=', keyHash).executeTakeFirst()
    if (session === undefined) return { ok: false, reason: 'unknown' } as const
    const again = keyProblem(session)
    if (again !== undefined) return { ok: false, reason: again } as const
    const org = await tx
      .selectFrom('organizations')
      .select(['balance', 'max_concurrent_sessions'])
      .where('id', '=', session.organization_id)
      .forUpdate()
      .executeTakeFirstOrThrow()
    if (balanceUsedUp(org)) return { ok: false, reason: 'insufficient_balance' } as const
    if (!holdsLease(session) && (await atConcurrencyLimit(tx, session.organization_id, org.max_concurrent_sessions))) {
      return { ok: false, reason: 'concurrency_limit' } as const
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
      // Not a row ended meanwhile (superseded, its link revoked) between the read above and this write.
      .where('status', '=', 'authorized')
      .returningAll()
      .executeTakeFirst()
    if (row === undefined) return { ok: false, reason: 'used' } as const
    return { ok: true, row } as const
  })
}

/**
 * Gives a carrier session that is still waiting for its media stream (an outbound call now answered, or a
 * voice hook the carrier repeated) a new one-time key, and moves its concurrency lease to `leaseOwner`.
 * The slot it already holds is kept, so it is never counted twice. Undefined when the session is no longer
 * waiting (ended, connected, or its lease lapsed).
 */
export async function rekeyWaitingSession(
  db: Kysely<Database>,
  input: {
    sessionId: string
    leaseOwner: string
    leaseTtlMs: number
    callStatus?: string | undefined
    fromPhoneCountry?: string | undefined
    toPhoneCountry?: string | undefined
  },
): Promise<{ key: string; expiresAt: Date } | undefined> {
  const key = newSecret('csk')
  const expiresAt = new Date(Date.now() + SESSION_KEY_TTL_MS)
  const row = await db
    .updateTable('sessions')
    .set({
      key_hash: hashToken(key),
      key_expires_at: expiresAt,
      lease_owner: input.leaseOwner,
      lease_expires_at: sql<Date>`now() + ${`${input.leaseTtlMs} milliseconds`}::interval`,
      ...(input.callStatus !== undefined && { call_status: input.callStatus }),
      ...(input.fromPhoneCountry !== undefined && {
        from_phone_country: sql<string>`coalesce(from_phone_country, ${input.fromPhoneCountry})`,
      }),
      ...(input.toPhoneCountry !== undefined && { to_phone_country: sql<string>`coalesce(to_phone_country, ${input.toPhoneCountry})` }),
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', input.sessionId)
    .where('status', '=', 'authorized')
    .where('key_used_at', 'is', null)
    .where('lease_expires_at', '>', sql<Date>`now()`)
    .returning('id')
    .executeTakeFirst()
  return row === undefined ? undefined : { key, expiresAt }
}
