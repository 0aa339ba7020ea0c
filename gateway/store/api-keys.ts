import type { Kysely } from 'kysely'
import type { Database } from './schema.js'
import { hashToken, newId, newSecret } from '../../core/ids.js'

/** Creates an API key for an organization; returns the plain key, which is not stored anywhere. */
export async function createApiKey(db: Kysely<Database>, organizationId: string): Promise<string> {
  const key = newSecret('vgk')
  await db
    .insertInto('api_keys')
    .values({ id: newId('key'), organization_id: organizationId, key_hash: hashToken(key), prefix: key.slice(0, 8) })
    .execute()
  return key
}

/** The organization id a plain key belongs to, or undefined for unknown or revoked keys. */
export async function organizationForApiKey(db: Kysely<Database>, key: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .select(['organization_id'])
    .where('key_hash', '=', hashToken(key))
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return row?.organization_id
}
