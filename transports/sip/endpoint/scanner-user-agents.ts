/**
 * Known SIP scanners by User-Agent. They probe every public SIP port for open registrars and dial plans; an
 * answer only tells them a SIP stack lives here, so their requests are dropped unanswered.
 */
import { getHeader, type SipRequest } from '../message/sip-message.js'

/** Lower-case fragments of the User-Agents that scanning and toll-fraud tools send by default. */
export const SCANNER_USER_AGENTS: readonly string[] = [
  'friendly-scanner',
  'sipvicious',
  'sipcli',
  'vaxsipuseragent',
  'sip-scan',
  'sipscan',
  'sundayddr',
  'iwar',
  'pplsip',
  'sivus',
  'smap',
]

/** True when the request's User-Agent names a known scanner. */
export function isScanner(request: Pick<SipRequest, 'headers'>): boolean {
  const agent = getHeader(request, 'User-Agent')?.toLowerCase()
  if (agent === undefined) return false
  return SCANNER_USER_AGENTS.some((fragment) => agent.includes(fragment))
}
