/**
 * How the carrier signs its requests (X-Twilio-Signature algorithm), written independently of
 * `carrier/twilio/signature.ts` so fakes do not share the code they test.
 */
import { createHmac } from 'node:crypto'

/** HMAC-SHA1 (base64) of the URL followed by each form field sorted by name as name+value. */
export function carrierSignature(authToken: string, url: string, form: Record<string, string | string[]>): string {
  let data = url
  for (const name of Object.keys(form).sort()) {
    const value = form[name]
    const values = Array.isArray(value) ? [...new Set(value)].sort() : [value]
    for (const v of values) data += name + v
  }
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64')
}

/** Encode a form whose repeated fields are arrays. */
export function encodeForm(form: Record<string, string | string[]>): string {
  const out = new URLSearchParams()
  for (const [name, value] of Object.entries(form)) {
    for (const v of Array.isArray(value) ? value : [value]) out.append(name, v)
  }
  return out.toString()
}

/** POST a form signed the carrier's way; `postTo` is where to connect, `signedUrl` what was signed. */
export async function postSignedForm(options: {
  postTo: string
  signedUrl: string
  form: Record<string, string | string[]>
  authToken: string | undefined
  signatureHeader?: string
  signal?: AbortSignal
}): Promise<{ status: number; contentType: string; body: string; retryAfter: string | null }> {
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    'user-agent': 'FakeCarrier/1.0',
  }
  if (options.authToken !== undefined) {
    headers[options.signatureHeader ?? 'X-Twilio-Signature'] = carrierSignature(options.authToken, options.signedUrl, options.form)
  }
  const init: RequestInit = { method: 'POST', headers, body: encodeForm(options.form) }
  if (options.signal) init.signal = options.signal
  const response = await fetch(options.postTo, init)
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    body: await response.text(),
    retryAfter: response.headers.get('retry-after'),
  }
}
