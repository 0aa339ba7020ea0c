/**
 * Where finished recordings can live outside the database: an object store that takes a WAV as a stream, hands out
 * short-lived download URLs and deletes. The S3-compatible one (`s3-object-store.ts`) is loaded only when
 * configured; the database stays the store while a call runs (any replica appends and serves), and finished files
 * move out afterwards (`RecordingOffloader`).
 */

/** Where finished recordings go when an object store is configured. */
export interface RecordingObjectStoreConfig {
  bucket: string
  /** Endpoint of an S3-compatible service (MinIO, R2, ...); undefined: AWS S3 itself. Path-style addressing when set. */
  endpoint: string | undefined
  region: string
  /** Both or neither; neither: the AWS SDK's default credential chain (AWS_* variables, instance role). */
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined
  /** Key prefix, e.g. `recordings/`; keys are `<prefix><organization_id>/<session_id>.wav` (and `-mono.wav`). */
  prefix: string
  /** Lifetime of the presigned download URLs the recording download redirects to. */
  urlTtlSeconds: number
}

/** An object store for finished recordings. */
export interface RecordingObjectStore {
  /** Stores `body` (exactly `size` bytes) under `key`, replacing what was there. */
  put(key: string, body: AsyncIterable<Buffer>, size: number, signal?: AbortSignal): Promise<void>
  /** A URL that downloads `key` for a short while, with byte ranges, as `filename`. */
  downloadUrl(key: string, filename: string): Promise<string>
  /** Deletes objects; keys that do not exist are not an error. */
  delete(keys: readonly string[]): Promise<void>
  /** Releases sockets. */
  close(): void
}

/** The object keys of one recording: the stereo file and its mono mixdown. */
export function recordingObjectKeys(stereoKey: string): { stereo: string; mono: string } {
  return { stereo: stereoKey, mono: stereoKey.replace(/\.wav$/, '-mono.wav') }
}

/** The stereo key of a session's recording under a prefix. */
export function recordingObjectKey(prefix: string, organizationId: string, sessionId: string): string {
  return `${prefix}${organizationId}/${sessionId}.wav`
}
