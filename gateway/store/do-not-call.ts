/** The organization's do-not-call list: numbers in E.164 that no outbound call may dial. */
import type { Kysely } from 'kysely'
import type { DoNotCallTable } from './campaign-schema.js'
import type { Database } from './schema.js'

/** Rows written per insert statement. */
const CHUNK = 1000

/** Adds `numbers` (E.164, checked by the caller); those already listed keep their entry. Returns how many were new. */
export async function addToDoNotCall(
  db: Kysely<Database>,
  organizationId: string,
  numbers: readonly string[],
  source: DoNotCallTable['source'],
): Promise<number> {
  let added = 0
  for (let i = 0; i < numbers.length; i += CHUNK) {
    const rows = [...new Set(numbers.slice(i, i + CHUNK))].map((phone_number) => ({
      organization_id: organizationId,
      phone_number,
      source,
    }))
    const inserted = await db
      .insertInto('do_not_call')
      .values(rows)
      .onConflict((oc) => oc.columns(['organization_id', 'phone_number']).doNothing())
      .returning('phone_number')
      .execute()
    added += inserted.length
  }
  return added
}

/** Removes a number; false when it was not listed. */
export async function removeFromDoNotCall(db: Kysely<Database>, organizationId: string, phoneNumber: string): Promise<boolean> {
  const r = await db
    .deleteFrom('do_not_call')
    .where('organization_id', '=', organizationId)
    .where('phone_number', '=', phoneNumber)
    .executeTakeFirst()
  return r.numDeletedRows > 0n
}

/** The entry of a listed number, or undefined. */
export async function doNotCallEntry(
  db: Kysely<Database>,
  organizationId: string,
  phoneNumber: string,
): Promise<{ source: DoNotCallTable['source']; created_at: Date } | undefined> {
  return db
    .selectFrom('do_not_call')
    .select(['source', 'created_at'])
    .where('organization_id', '=', organizationId)
    .where('phone_number', '=', phoneNumber)
    .executeTakeFirst()
}
