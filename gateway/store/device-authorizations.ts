import { randomInt } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import type { Database, DeviceAuthorizationRow } from './schema.js'
import { hashToken, newId, newSecret } from '../../core/ids.js'
import { issueApiKey } from './api-keys.js'

/** Letters of a user code: RFC 8628's consonant set (no vowels, so no words; no 0/O/1/I to misread). */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'
/** Letters in a user code (shown as two groups of four). */
export const USER_CODE_LENGTH = 8
/** Expired rows are kept this long (so polling hears `expired_token`), then deleted. */
const KEEP_EXPIRED_MS = 60 * 60 * 1000
/** Advisory lock that serialises the pending-code count and the insert (any number, fixed). */
const CREATE_LOCK = 7_461_031

/** Limits on pending codes: per client IP and over all. */
export interface DeviceCodeLimits {
  perIp: number
  total: number
}

/** What the CLI is handed: the secret device code and the code the person types or checks. */
export interface NewDeviceAuthorization {
  deviceCode: string
  /** `ABCD-EFGH`. */
  userCode: string
  expiresAt: Date
}

/** `ABCDEFGH` -> `ABCD-EFGH`. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`
}

/** A typed user code as stored (case-insensitive, hyphen and spaces optional), or undefined when it cannot be one. */
export function normalizeUserCode(input: string): string | undefined {
  const code = input.toUpperCase().replace(/[\s-]/g, '')
  if (code.length !== USER_CODE_LENGTH) return undefined
  return [...code].every((c) => USER_CODE_ALPHABET.includes(c)) ? code : undefined
}

function randomUserCode(): string {
  let code = ''
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]
  return code
}

/**
 * Starts a device authorization, or returns `limit` when the client IP or everyone together already holds as many
 * pending codes as allowed. The count and the insert run under one advisory lock, so replicas cannot overshoot.
 */
export async function createDeviceAuthorization(
  db: Kysely<Database>,
  opts: { clientName: string | null; clientIp: string | null; ttlMs: number; limits: DeviceCodeLimits; now?: Date },
): Promise<NewDeviceAuthorization | 'limit'> {
  const now = opts.now ?? new Date()
  return db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(${CREATE_LOCK})`.execute(tx)
    await tx
      .deleteFrom('device_authorizations')
      .where('expires_at', '<', new Date(now.getTime() - KEEP_EXPIRED_MS))
      .execute()
    const pending = await tx
      .selectFrom('device_authorizations')
      .select((eb) => [
        eb.fn.countAll<number>().as('total'),
        eb.fn
          .count<number>('id')
          .filterWhere('client_ip', opts.clientIp === null ? 'is' : '=', opts.clientIp)
          .as('mine'),
      ])
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow()
    if (Number(pending.mine) >= opts.limits.perIp || Number(pending.total) >= opts.limits.total) return 'limit'
    const deviceCode = newSecret('vxd')
    // 20^8 codes: a clash with a live one is rare enough that drawing again beats a unique-violation retry.
    let userCode = randomUserCode()
    while (await tx.selectFrom('device_authorizations').select('id').where('user_code', '=', userCode).executeTakeFirst()) {
      userCode = randomUserCode()
    }
    const expiresAt = new Date(now.getTime() + opts.ttlMs)
    await tx
      .insertInto('device_authorizations')
      .values({
        id: newId('dev'),
        device_code_hash: hashToken(deviceCode),
        user_code: userCode,
        client_name: opts.clientName,
        client_ip: opts.clientIp,
        status: 'pending',
        expires_at: expiresAt,
      })
      .execute()
    return { deviceCode, userCode: formatUserCode(userCode), expiresAt }
  })
}

/**
 * The person's decision on a pending, unexpired code: approve for an organization, or deny. Returns false when
 * the code is unknown, expired or already decided.
 */
export async function decideDeviceAuthorization(
  db: Kysely<Database>,
  userCode: string,
  decision: { approve: true; organizationId: string } | { approve: false },
  now = new Date(),
): Promise<boolean> {
  const code = normalizeUserCode(userCode)
  if (code === undefined) return false
  const res = await db
    .updateTable('device_authorizations')
    .set({
      status: decision.approve ? 'approved' : 'denied',
      organization_id: decision.approve ? decision.organizationId : null,
      decided_at: now,
    })
    .where('user_code', '=', code)
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .executeTakeFirst()
  return Number(res.numUpdatedRows) > 0
}

/** The outcome of polling with a device code. */
export type DeviceTokenResult =
  | { kind: 'authorization_pending' | 'expired_token' | 'access_denied' | 'invalid_grant' }
  | { kind: 'approved'; apiKey: string; keyId: string; organizationId: string; organizationName: string }

/**
 * Redeems a device code: an approved one yields a new API key exactly once (made now, labelled after the
 * client); the others say why not.
 */
export async function redeemDeviceCode(db: Kysely<Database>, deviceCode: string, now = new Date()): Promise<DeviceTokenResult> {
  const row: DeviceAuthorizationRow | undefined = await db
    .selectFrom('device_authorizations')
    .selectAll()
    .where('device_code_hash', '=', hashToken(deviceCode))
    .executeTakeFirst()
  if (row === undefined || row.status === 'redeemed') return { kind: 'invalid_grant' }
  if (row.expires_at.getTime() <= now.getTime()) return { kind: 'expired_token' }
  if (row.status === 'denied') return { kind: 'access_denied' }
  if (row.status === 'pending' || row.organization_id === null) return { kind: 'authorization_pending' }
  const organizationId = row.organization_id
  return db.transaction().execute(async (tx): Promise<DeviceTokenResult> => {
    // Only the poll that flips approved -> redeemed gets the key.
    const claimed = await tx
      .updateTable('device_authorizations')
      .set({ status: 'redeemed', redeemed_at: now })
      .where('id', '=', row.id)
      .where('status', '=', 'approved')
      .executeTakeFirst()
    if (Number(claimed.numUpdatedRows) === 0) return { kind: 'invalid_grant' }
    const org = await tx.selectFrom('organizations').select(['id', 'name']).where('id', '=', organizationId).executeTakeFirst()
    if (org === undefined) return { kind: 'invalid_grant' }
    const label = row.client_name === null ? 'CLI' : `CLI (${row.client_name})`
    const issued = await issueApiKey(tx, org.id, label)
    return { kind: 'approved', apiKey: issued.key, keyId: issued.id, organizationId: org.id, organizationName: org.name }
  })
}
