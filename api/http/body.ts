import type { Context } from 'koa'
import getRawBody from 'raw-body'
import { voxError } from '../../core/errors.js'
import { MAX_JSON_DEPTH, jsonNestsDeeperThan } from '../../pipeline/index.js'

/** Largest request body the API reads (JSON and form); larger bodies get 413. */
export const MAX_BODY_BYTES = 1024 * 1024

/** A request body read once: raw bytes for signatures, and the parsed value. */
export interface ParsedBody {
  raw: Buffer
  kind: 'json' | 'form' | 'empty'
  /** JSON value, or for forms an object of string fields (repeated fields: arrays). */
  value: unknown
  /** Form fields as pairs in wire order (signatures need repeated fields). */
  pairs: [string, string][]
}

/** The raw request body, at most `limit` bytes (413 beyond). */
export async function readRaw(ctx: Context, limit: number): Promise<Buffer> {
  try {
    return await getRawBody(ctx.req, { limit, length: ctx.get('content-length') || undefined })
  } catch (e) {
    const err = e as { type?: string; status?: number }
    if (err.type === 'entity.too.large' || err.status === 413) throw voxError('payload_too_large')
    throw voxError('bad_request', 'could not read the request body', { cause: e })
  }
}

/** Reads and parses the body by content type: JSON or form-encoded; anything else is 415. */
export async function readBody(ctx: Context, limit = MAX_BODY_BYTES): Promise<ParsedBody> {
  const raw = await readRaw(ctx, limit)
  if (raw.length === 0) return { raw, kind: 'empty', value: undefined, pairs: [] }
  const type = (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase()
  if (type === 'application/x-www-form-urlencoded') {
    const pairs = [...new URLSearchParams(raw.toString('utf8'))]
    const value: Record<string, string | string[]> = {}
    for (const [k, v] of pairs) {
      const prev = value[k]
      value[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v]
    }
    return { raw, kind: 'form', value, pairs }
  }
  if (type === 'application/json' || type === '' || type.endsWith('+json')) {
    // Before the parse: what follows it (validation, cloning, webhooks) recurses, and deep input is refused unread.
    if (jsonNestsDeeperThan(raw)) {
      throw voxError('json_too_deep', `the request body nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays`)
    }
    try {
      return { raw, kind: 'json', value: JSON.parse(raw.toString('utf8')), pairs: [] }
    } catch {
      throw voxError('bad_json')
    }
  }
  throw voxError('unsupported_media_type', `unsupported content type ${type}: send application/json`)
}

/** Reads a JSON object body; an empty body counts as `{}`. Anything but an object is 400. */
export async function readJsonObject(ctx: Context): Promise<Record<string, unknown>> {
  const body = await readBody(ctx)
  if (body.kind === 'empty') return {}
  if (body.kind !== 'json') throw voxError('unsupported_media_type', 'send application/json')
  if (body.value === null || typeof body.value !== 'object' || Array.isArray(body.value)) {
    throw voxError('validation_failed', 'request body must be a JSON object')
  }
  return body.value as Record<string, unknown>
}
