/** Purging what a finished session kept: its transcript, and the transcripts its webhook records carry. */
import type { Kysely } from 'kysely'
import type { Database } from './schema.js'

/** What a purge removed. */
export interface PurgedText {
  /** Transcript turns deleted. */
  transcriptTurns: number
  /** Recorded `session.end` deliveries whose `transcript` was emptied. */
  webhookDeliveries: number
}

/**
 * Deletes a session's transcript turns and empties the `transcript` of its recorded `session.end` webhook
 * deliveries (the console shows and re-sends them), in one transaction. The session row, its usage and its
 * latency figures stay: they hold no words.
 */
export async function purgeSessionText(db: Kysely<Database>, sessionId: string): Promise<PurgedText> {
  return db.transaction().execute(async (tx) => {
    const turns = await tx.deleteFrom('transcript_entries').where('session_id', '=', sessionId).executeTakeFirst()
    const deliveries = await tx
      .selectFrom('webhook_deliveries')
      .select(['id', 'body'])
      .where('session_id', '=', sessionId)
      .where('type', '=', 'session.end')
      .execute()
    for (const d of deliveries) {
      const body = JSON.parse(d.body) as Record<string, unknown>
      body.transcript = []
      await tx
        .updateTable('webhook_deliveries')
        .set({ body: JSON.stringify(body) })
        .where('id', '=', d.id)
        .execute()
    }
    return { transcriptTurns: Number(turns.numDeletedRows), webhookDeliveries: deliveries.length }
  })
}
