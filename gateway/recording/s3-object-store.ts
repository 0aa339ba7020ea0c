/**
 * Recordings in an S3-compatible object store through the AWS SDK (v3): multipart uploads from a stream (bounded
 * memory: 5 MiB parts, one at a time), presigned GET URLs for downloads. Imported only when `RECORDING_S3_BUCKET`
 * is set, so a gateway without it loads none of the SDK.
 */
import { DeleteObjectsCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { Readable } from 'node:stream'
import type { RecordingObjectStore, RecordingObjectStoreConfig } from './object-store.js'

/** S3 deletes at most this many keys per request. */
const DELETE_BATCH = 1000

export function s3ObjectStore(config: RecordingObjectStoreConfig): RecordingObjectStore {
  const client = new S3Client({
    region: config.region,
    endpoint: config.endpoint,
    forcePathStyle: config.endpoint !== undefined,
    credentials: config.credentials,
    // Checksums only where the service requires them: S3-compatible stores do not all know the newer ones.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
  return {
    async put(key, body, size, signal) {
      const upload = new Upload({
        client,
        params: { Bucket: config.bucket, Key: key, Body: Readable.from(body), ContentType: 'audio/wav', ContentLength: size },
        queueSize: 1,
        partSize: 5 * 1024 * 1024,
        leavePartsOnError: false,
      })
      const abort = () => void upload.abort()
      signal?.addEventListener('abort', abort, { once: true })
      try {
        await upload.done()
      } finally {
        signal?.removeEventListener('abort', abort)
      }
    },
    downloadUrl(key, filename) {
      const get = new GetObjectCommand({
        Bucket: config.bucket,
        Key: key,
        ResponseContentType: 'audio/wav',
        ResponseContentDisposition: `attachment; filename="${filename.replace(/["\\\r\n]/g, '')}"`,
      })
      return getSignedUrl(client, get, { expiresIn: config.urlTtlSeconds })
    },
    async delete(keys) {
      for (let i = 0; i < keys.length; i += DELETE_BATCH) {
        const batch = keys.slice(i, i + DELETE_BATCH)
        const out = await client.send(
          new DeleteObjectsCommand({ Bucket: config.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
        )
        const failed = out.Errors?.filter((e) => e.Code !== 'NoSuchKey') ?? []
        if (failed.length > 0) throw new Error(`object store refused to delete ${failed.length} object(s): ${failed[0]?.Code}`)
      }
    },
    close() {
      client.destroy()
    },
  }
}
