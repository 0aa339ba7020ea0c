import type { Kysely } from 'kysely'
import type { Database } from './schema.js'

/** A template as seeded from code. */
export interface TemplateSeed {
  id: string
  name: string
  description: string
  config: unknown
}

/** Inserts or refreshes the built-in templates; exactly one is the default. */
export async function seedTemplates(db: Kysely<Database>, templates: TemplateSeed[], defaultId: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    for (const t of templates) {
      const values = { name: t.name, description: t.description, config: JSON.stringify(t.config), is_default: t.id === defaultId }
      await tx
        .insertInto('agent_templates')
        .values({ id: t.id, ...values })
        .onConflict((oc) => oc.column('id').doUpdateSet(values))
        .execute()
    }
  })
}

/** A template's config, or the default template when `id` is undefined; undefined when not found. */
export async function getTemplate(db: Kysely<Database>, id: string | undefined): Promise<{ id: string; config: unknown } | undefined> {
  let q = db.selectFrom('agent_templates').select(['id', 'config'])
  q = id === undefined ? q.where('is_default', '=', true) : q.where('id', '=', id)
  return q.executeTakeFirst()
}
