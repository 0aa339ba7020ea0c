import type { Kysely, Migration } from 'kysely'

/**
 * Call control: where a transferred call went, answering machine detection, and the outbound pacing of each organization (calls per
 * second its carrier account allows) with the per-organization schedule the database keeps across replicas.
 */
export const callControl: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not the current type
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('sessions').addColumn('transferred_to', 'text').execute()
    // Answering machine detection of outbound calls: asked for, and the verdict (human, machine, machine_beep, unknown).
    await db.schema
      .alterTable('sessions')
      .addColumn('machine_detection', 'boolean', (c) => c.notNull().defaultTo(false))
      .execute()
    await db.schema.alterTable('sessions').addColumn('answered_by', 'text').execute()
    // When the pacing gate let an outbound call dial: what the organization's rate is audited against.
    await db.schema.alterTable('sessions').addColumn('dialed_at', 'timestamptz').execute()
    await db.schema.alterTable('organizations').addColumn('outbound_calls_per_second', 'real').execute()
    // The next free dial slot of an organization: taking a slot moves it forward in one locked UPDATE, so
    // replicas on one database agree on the order.
    await db.schema.alterTable('organizations').addColumn('outbound_next_slot_at', 'timestamptz').execute()
    // When a call of the organization last went to the carrier, from any replica: the floor between two dials.
    await db.schema.alterTable('organizations').addColumn('outbound_last_dial_at', 'timestamptz').execute()
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('organizations').dropColumn('outbound_last_dial_at').execute()
    await db.schema.alterTable('organizations').dropColumn('outbound_next_slot_at').execute()
    await db.schema.alterTable('organizations').dropColumn('outbound_calls_per_second').execute()
    await db.schema.alterTable('sessions').dropColumn('dialed_at').execute()
    await db.schema.alterTable('sessions').dropColumn('answered_by').execute()
    await db.schema.alterTable('sessions').dropColumn('machine_detection').execute()
    await db.schema.alterTable('sessions').dropColumn('transferred_to').execute()
  },
}
