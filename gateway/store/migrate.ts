import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely'
import { initial } from './migrations/0001-initial.js'
import { agentLinks } from './migrations/0002-agent-links.js'
import { latencyBreakdown } from './migrations/0003-latency-breakdown.js'
import { recordings } from './migrations/0004-recordings.js'
import { recordingObjects } from './migrations/0005-recording-objects.js'
import { deviceAuth } from './migrations/0006-device-auth.js'
import { consoleReads } from './migrations/0007-webhook-deliveries.js'
import { tunnels } from './migrations/0008-tunnels.js'
import { callControl } from './migrations/0009-call-control.js'
import { tunnelHolderUrl } from './migrations/0010-tunnel-holder-url.js'
import { turnFailures } from './migrations/0011-turn-failures.js'
import { sessionListOrder } from './migrations/0012-session-list-order.js'
import { failedTurnsIndex } from './migrations/0013-failed-turns-index.js'
import { recordingPrivacy } from './migrations/0014-recording-privacy.js'
import { sipTrunks } from './migrations/0015-sip-trunks.js'
import { sessionTransfers } from './migrations/0016-session-transfers.js'
import { recordingChunkStorage } from './migrations/0017-recording-chunk-storage.js'
import { rateLimits } from './migrations/0018-rate-limits.js'
import { tenantBoundaries } from './migrations/0019-tenant-boundaries.js'
import { sipAuthFailures } from './migrations/0020-sip-auth-failures.js'
import { sipMediaEncryption } from './migrations/0021-sip-media-encryption.js'
import { campaigns } from './migrations/0022-campaigns.js'
import { doNotCall } from './migrations/0023-do-not-call.js'
import { transferLegsHeldSpans } from './migrations/0024-transfer-legs-held-spans.js'
import { turnEndReason } from './migrations/0026-turn-end-reason.js'

/** Every migration, in order; names sort the way they must run. */
export const MIGRATIONS: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-agent-links': agentLinks,
  '0003-latency-breakdown': latencyBreakdown,
  '0004-recordings': recordings,
  '0005-recording-objects': recordingObjects,
  '0006-device-auth': deviceAuth,
  '0007-webhook-deliveries': consoleReads,
  '0008-tunnels': tunnels,
  '0009-call-control': callControl,
  '0010-tunnel-holder-url': tunnelHolderUrl,
  '0011-turn-failures': turnFailures,
  '0012-session-list-order': sessionListOrder,
  '0013-failed-turns-index': failedTurnsIndex,
  '0014-recording-privacy': recordingPrivacy,
  '0015-sip-trunks': sipTrunks,
  '0016-session-transfers': sessionTransfers,
  '0017-recording-chunk-storage': recordingChunkStorage,
  '0018-rate-limits': rateLimits,
  '0019-tenant-boundaries': tenantBoundaries,
  '0020-sip-auth-failures': sipAuthFailures,
  '0021-sip-media-encryption': sipMediaEncryption,
  '0022-campaigns': campaigns,
  '0023-do-not-call': doNotCall,
  '0024-transfer-legs-held-spans': transferLegsHeldSpans,
  '0026-turn-end-reason': turnEndReason,
}

/** Serves the migrations from code, so a compiled build and tsx run the same set. */
class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS
  }
}

/** Brings the schema up to date; throws with the failing migration's name when one fails. */
// biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema type exists (kysely convention)
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider() })
  const { error, results } = await migrator.migrateToLatest()
  const failed = results?.find((r) => r.status === 'Error')
  if (error !== undefined || failed !== undefined) {
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String((error as Error)?.message ?? error)}`, {
      cause: error,
    })
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
