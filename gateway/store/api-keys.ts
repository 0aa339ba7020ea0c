import type { Kysely } from 'kysely'
import type { Database } from './schema.js'
import { hashToken, newId, newSecret } from '../../core/ids.js'

/** A key just made: the plain key (shown once, never stored) and its id. */
export interface IssuedApiKey {
  key: string
  id: string
}

/** The organization and key id a presented key stands for. */
export interface ApiKeyIdentity {
  organizationId: string
  keyId: string
}

/** Makes an API key for an organization, optionally labelled; the plain key is returned and not stored. */
export async function issueApiKey(db: Kysely<Database>, organizationId: string, name?: string): Promise<IssuedApiKey> {
  const key = newSecret('vgk')
  const id = newId('key')
  await db
    .insertInto('api_keys')
    .values({ id, organization_id: organizationId, key_hash: hashToken(key), prefix: key.slice(0, 8), name: name ?? null })
    .execute()
  return { key, id }
}

/** Creates an API key for an organization; returns the plain key, which is not stored anywhere. */
export async function createApiKey(db: Kysely<Database>, organizationId: string): Promise<string> {
  return (await issueApiKey(db, organizationId)).key
}

/** The organization and key id of a plain key, or undefined for unknown or revoked keys. */
export async function apiKeyIdentity(db: Kysely<Database>, key: string): Promise<ApiKeyIdentity | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .select(['id', 'organization_id'])
    .where('key_hash', '=', hashToken(key))
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return row && { organizationId: row.organization_id, keyId: row.id }
}

/** The organization id a plain key belongs to, or undefined for unknown or revoked keys. */
export async function organizationForApiKey(db: Kysely<Database>, key: string): Promise<string | undefined> {
  return (await apiKeyIdentity(db, key))?.organizationId
}

/** Revokes one key of an organization; false when it is unknown or already revoked. */
export async function revokeApiKey(db: Kysely<Database>, organizationId: string, keyId: string): Promise<boolean> {
  const res = await db
    .updateTable('api_keys')
    .set({ revoked_at: new Date() })
    .where('id', '=', keyId)
    .where('organization_id', '=', organizationId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return Number(res.numUpdatedRows) > 0
}
