import { sql, type Kysely, type Migration } from 'kysely'

/**
 * SRTP per trunk: `media_encryption` says whether a trunk's calls may (`optional`) or must
 * (`required`) carry their audio as SRTP keyed by SDES, or stay plain RTP (`none`, the default, so existing
 * trunks keep what they did). A check constraint keeps the column to the three words the API accepts.
 */
export const sipMediaEncryption: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .alterTable('sip_trunks')
      .addColumn('media_encryption', 'text', (c) =>
        c.notNull().defaultTo('none').check(sql`media_encryption in ('none', 'optional', 'required')`),
      )
      .execute()
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('sip_trunks').dropColumn('media_encryption').execute()
  },
}
