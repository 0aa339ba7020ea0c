/**
 * An S3-compatible object store for tests: `s3rver` (an S3 emulator speaking the S3 REST API) on a random port
 * over a temporary directory, with the bucket made. It can be stopped and started again on the same port and data
 * (a store outage).
 */
import { CreateBucketCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
// @ts-expect-error s3rver ships no type declarations
import S3rver from 's3rver'

export interface TestS3 {
  endpoint: string
  bucket: string
  /** RECORDING_S3_* variables for a gateway using it. */
  env: Record<string, string>
  /** True when `key` exists in the bucket. */
  exists(key: string): Promise<boolean>
  /** Stops answering (connections refused) until `start`. */
  stop(): Promise<void>
  start(): Promise<void>
  close(): Promise<void>
}

export async function startS3(bucket = 'voxgate-recordings'): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), 'voxgate-s3-'))
  let port = 0
  let server: { run(): Promise<unknown>; close(): Promise<void> }
  const run = async () => {
    server = new S3rver({ port, address: '127.0.0.1', silent: true, directory, resetOnClose: false })
    const info = (await server.run()) as { port: number }
    port = info.port
  }
  await run()
  const endpoint = `http://127.0.0.1:${port}`
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials })
  await client.send(new CreateBucketCommand({ Bucket: bucket }))
  return {
    endpoint,
    bucket,
    env: {
      RECORDING_S3_BUCKET: bucket,
      RECORDING_S3_ENDPOINT: endpoint,
      RECORDING_S3_ACCESS_KEY_ID: credentials.accessKeyId,
      RECORDING_S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    },
    async exists(key) {
      try {
        await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))
        return true
      } catch (e) {
        if ((e as { name?: string }).name === 'NotFound') return false
        throw e
      }
    },
    stop: () => server.close(),
    start: run,
    async close() {
      client.destroy()
      await server.close().catch(() => undefined)
      rmSync(directory, { recursive: true, force: true })
    },
  }
}
