/**
 * Reading and authenticating one carrier webhook (voice hook, status callback): the body as form fields
 * (form-encoded, or JSON whose signature covers its hash), and the signature checked through the carrier
 * against the URL it signed, built from PUBLIC_URL.
 */
import type { Context } from 'koa'
import { carrierSignatureOf, type Carrier, type CarrierFormParams } from '../../carrier/carrier.js'
import { readBody } from './body.js'
import { voxError } from '../../core/errors.js'
import type { Log } from '../../core/log.js'

/** Largest carrier webhook body read (the carrier's forms are a few hundred bytes). */
export const MAX_CARRIER_BODY_BYTES = 64 * 1024

/** A carrier webhook as read: its fields and what the signature check needs. */
export interface CarrierRequest {
  readonly params: CarrierFormParams
  readonly raw: Buffer
  readonly kind: 'form' | 'json' | 'empty'
  /** The URL the carrier signed: PUBLIC_URL + the path and query as received (never the Host header). */
  readonly url: string
}

/** Reads the body; JSON objects become string fields so both encodings are handled alike. */
export async function readCarrierRequest(ctx: Context, carrier: Carrier, publicUrl: string): Promise<CarrierRequest> {
  const body = await readBody(ctx, MAX_CARRIER_BODY_BYTES)
  const url = carrier.verifier.requestUrl(publicUrl, ctx.originalUrl)
  if (body.kind === 'form') return { params: body.value as CarrierFormParams, raw: body.raw, kind: 'form', url }
  if (body.kind === 'empty') return { params: {}, raw: body.raw, kind: 'empty', url }
  if (body.value === null || typeof body.value !== 'object' || Array.isArray(body.value)) {
    throw voxError('bad_request', 'carrier webhook body must be a form or a JSON object')
  }
  const params: Record<string, string> = {}
  for (const [k, v] of Object.entries(body.value as Record<string, unknown>)) {
    if (typeof v === 'string') params[k] = v
    else if (typeof v === 'number' || typeof v === 'boolean') params[k] = String(v)
  }
  return { params, raw: body.raw, kind: 'json', url }
}

/**
 * Requires a valid signature made with `authToken`; throws 403 `invalid_signature` otherwise (the carrier's
 * verifier also refuses a body its signature does not cover).
 */
export function requireSignature(ctx: Context, carrier: Carrier, request: CarrierRequest, authToken: string, log: Log): void {
  const signature = carrierSignatureOf(carrier.verifier, (name) => ctx.get(name) || undefined)
  const result = carrier.verifier.verify(
    { url: request.url, signature, params: request.params, rawBody: request.raw, bodyKind: request.kind },
    authToken,
  )
  if (result.ok) return
  // The usual cause of a bad signature is a PUBLIC_URL that differs from the URL configured at the carrier.
  log.warn(
    { path: ctx.path, reason: result.reason, signed_url: request.url.split('?')[0] },
    `carrier webhook refused: ${result.detail ?? 'bad signature'}`,
  )
  if (result.reason === 'missing_signature') throw voxError('invalid_signature', 'missing carrier signature header')
  throw voxError(
    'invalid_signature',
    result.detail === undefined ? 'invalid carrier signature' : `invalid carrier signature: ${result.detail}`,
  )
}
