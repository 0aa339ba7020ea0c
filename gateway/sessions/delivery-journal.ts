import type { Kysely } from 'kysely'
import type { Database } from '../store/schema.js'
import type { Log } from '../../core/log.js'
import type { DeliveryJournal } from '../webhooks/webhook-queue.js'
import { recordDeliveryAttempt, recordDeliveryStart } from '../store/webhook-deliveries.js'

/**
 * Records one session's lifecycle webhook deliveries in the database (any replica's console reads them). A failed
 * write is logged and skipped: the delivery itself goes on.
 */
export function sessionDeliveryJournal(db: Kysely<Database>, log: Log, session: { id: string; organization_id: string }): DeliveryJournal {
  return {
    async begin(type, body, url) {
      try {
        return await recordDeliveryStart(db, { sessionId: session.id, organizationId: session.organization_id, type, url, body })
      } catch (e) {
        log.warn({ err: e, session_id: session.id, type }, 'could not record a webhook delivery')
        return undefined
      }
    },
    async attempted(id, result, final) {
      try {
        await recordDeliveryAttempt(db, id, { ...result, final })
      } catch (e) {
        log.warn({ err: e, session_id: session.id, type: result.type }, 'could not record a webhook delivery attempt')
      }
    },
  }
}
