import { z } from 'zod'

/** How strictly outgoing webhook URLs are checked. */
export interface UrlPolicy {
  /** Accept plain `http://` when the host is a loopback address (local development, tests). */
  allowInsecureLoopback?: boolean
  /**
   * URL prefixes accepted whatever their scheme: the gateway's own tunnel addresses (`PUBLIC_URL/tunnel/`), which
   * it serves itself, so a developer's gateway on plain http needs no switch for `voxgate tunnel`.
   */
  trustedPrefixes?: readonly string[]
  /** Added to the refusal of a plain-http URL that `allowInsecureLoopback` would accept: how to turn it on. */
  insecureHint?: string
}

const MAX_URL_LENGTH = 2048

/** True when `hostname` (as `URL#hostname` spells it) is 127.0.0.0/8, ::1 or localhost. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '')
  if (host === 'localhost' || host === '[::1]') return true
  // URL normalises IPv4 forms such as 127.1 or 0x7f.0.0.1 to dotted decimal, so one pattern suffices.
  const octets = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host)
  return octets !== null && octets[1] === '127'
}

/**
 * The reason `raw` is not acceptable as a webhook URL under `policy`, or `undefined` when it is.
 * Credentials in the URL are refused: they would be logged and sent in clear to every proxy.
 */
export function webhookUrlProblem(raw: string, policy: UrlPolicy = {}): string | undefined {
  if (raw.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'must be a valid absolute URL'
  }
  if (url.username !== '' || url.password !== '') return 'must not contain credentials'
  if (policy.trustedPrefixes?.some((prefix) => url.href.startsWith(prefix)) === true) return undefined
  if (url.protocol === 'http:') {
    const loopback = isLoopbackHost(url.hostname)
    if (policy.allowInsecureLoopback !== true) {
      // Say how to lift the refusal only where lifting it would help: a loopback host.
      return loopback && policy.insecureHint !== undefined ? `must use https (${policy.insecureHint})` : 'must use https'
    }
    if (!loopback) return 'must use https (plain http is accepted only for loopback hosts)'
  } else if (url.protocol !== 'https:') {
    return 'must use https'
  }
  return undefined
}

/** A webhook URL string: https, or http to a loopback host when the policy allows it. */
export function webhookUrl(policy: UrlPolicy) {
  return z.string().superRefine((value, ctx) => {
    const problem = webhookUrlProblem(value, policy)
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem })
  })
}
