import type { RecordingObjectStore } from '../gateway/recording/object-store.js'
import { RecordingMover } from '../gateway/recording/recording-mover.js'
import { RecordingRetention } from '../gateway/recording/retention.js'
import type { GatewayDeps } from './gateway-deps.js'

/** Where finished recordings go and how long they stay. */
export interface RecordingStorage {
  /** The object store (RECORDING_S3_BUCKET set). */
  readonly objects: RecordingObjectStore | undefined
  /** Moves finished recordings to the object store. */
  readonly mover: RecordingMover | undefined
  /** Deletes old recordings. */
  readonly retention: RecordingRetention
}

/** The object store and its mover when configured, and the retention sweep. */
export async function recordingStorage(deps: GatewayDeps): Promise<RecordingStorage> {
  const { config, store, log } = deps
  // Loaded only when configured, like tracing: without RECORDING_S3_BUCKET no AWS SDK code is imported.
  const objectConfig = config.recordingObjectStore
  const objects =
    objectConfig === undefined ? undefined : (await import('../gateway/recording/s3-object-store.js')).s3ObjectStore(objectConfig)
  const mover =
    objects === undefined || objectConfig === undefined
      ? undefined
      : new RecordingMover({ db: store.db, log, objects, prefix: objectConfig.prefix })
  // Always swept: an agent's privacy.retention_days applies without a process-wide retention.
  const retention = new RecordingRetention(store.db, log, config.recordingRetentionDays, objects)
  return { objects, mover, retention }
}
