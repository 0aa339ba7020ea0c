/**
 * RFC 4028 session timers as a UAS: read Session-Expires and Min-SE from an INVITE (or UPDATE), refuse an
 * interval below our minimum with 422, pick the refresher, and give the headers for the 2xx and the two
 * deadlines the dialog keeps (refresh at half the interval when we refresh; BYE when the peer should have
 * refreshed and did not). Pure: the dialog layer owns the timers.
 */
import { getHeader, getHeaderValues, type SipHeader, type SipRequest } from '../message/sip-message.js'
import { parseParams } from '../message/sip-syntax.js'

/** The lowest session interval allowed by RFC 4028 section 4 (and our Min-SE by default), in seconds. */
export const MIN_SESSION_EXPIRES = 90

/** Our options. */
export interface SessionTimerOptions {
  /** Our Min-SE, in seconds; at least 90. */
  readonly minSe?: number
  /** The longest interval we accept; a longer one is lowered (RFC 4028 section 9 lets the UAS reduce it). */
  readonly maxSe?: number
}

/** Who refreshes the session. */
export type Refresher = 'uac' | 'uas'

/** What to do with the request's session timer. */
export type SessionTimerDecision =
  | { readonly kind: 'none' }
  | { readonly kind: 'too_small'; readonly status: 422; readonly headers: readonly SipHeader[] }
  | { readonly kind: 'bad_request'; readonly status: 400; readonly reason: string }
  | { readonly kind: 'timer'; readonly intervalS: number; readonly refresher: Refresher; readonly headers: readonly SipHeader[] }

/** Decides the session timer for an incoming INVITE or UPDATE, as the UAS. */
export function negotiateSessionTimer(request: Pick<SipRequest, 'headers'>, options: SessionTimerOptions = {}): SessionTimerDecision {
  const ourMin = Math.max(MIN_SESSION_EXPIRES, options.minSe ?? MIN_SESSION_EXPIRES)
  const maxSe = Math.max(ourMin, options.maxSe ?? 1800)
  const value = getHeader(request, 'Session-Expires')
  if (value === undefined) return { kind: 'none' }
  const m = /^([0-9]{1,10})\s*(;.*)?$/.exec(value.trim())
  const params = m === null ? null : parseParams(m[2] ?? '')
  if (m === null || params === null) return { kind: 'bad_request', status: 400, reason: 'bad Session-Expires' }
  const requested = Number(m[1])
  const theirMinText = getHeader(request, 'Min-SE')
  const theirMin = theirMinText === undefined ? MIN_SESSION_EXPIRES : Number(/^\s*([0-9]{1,10})/.exec(theirMinText)?.[1] ?? Number.NaN)
  if (!Number.isFinite(theirMin)) return { kind: 'bad_request', status: 400, reason: 'bad Min-SE' }
  if (requested < ourMin) return { kind: 'too_small', status: 422, headers: [{ name: 'Min-SE', value: String(ourMin) }] }

  const intervalS = Math.max(Math.min(requested, maxSe), theirMin, ourMin)
  const uacSupports = (getHeaderValues(request, 'Supported') ?? []).some((v) => v.toLowerCase() === 'timer')
  const asked = params.get('refresher')
  // Section 9: honour the UAC's choice; if it made none, let a timer-capable UAC refresh, else we must.
  const refresher: Refresher =
    asked === 'uac' || asked === 'uas' ? (asked === 'uac' && !uacSupports ? 'uas' : asked) : uacSupports ? 'uac' : 'uas'
  const headers: SipHeader[] = [{ name: 'Session-Expires', value: `${intervalS};refresher=${refresher}` }]
  // Section 9: when the UAC is to refresh, the 2xx requires it to understand the extension.
  if (refresher === 'uac') headers.push({ name: 'Require', value: 'timer' })
  return { kind: 'timer', intervalS, refresher, headers }
}

/**
 * The deadlines, in ms from the last refresh: when we refresh, at half the interval (section 10); when the peer
 * does, a BYE if nothing came by the interval minus min(32 s, a third of it) (section 10).
 */
export function sessionTimerDeadline(
  intervalS: number,
  weRefresh: boolean,
): { readonly refreshInMs: number } | { readonly byeInMs: number } {
  if (weRefresh) return { refreshInMs: (intervalS * 1000) / 2 }
  return { byeInMs: (intervalS - Math.min(32, intervalS / 3)) * 1000 }
}
