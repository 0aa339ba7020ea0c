/**
 * The SIP lockout's Prometheus metrics, registered on the gateway's registry beside the others
 * (prometheus-metrics.ts): refused digest answers by reason, and sources blocked.
 */
import { Counter, type Registry } from 'prom-client'
import type { SipAuthMetrics } from '../gateway/admission/sip-auth-lockout.js'

/** Reasons always reported, so a dashboard sees 0 rather than no series. */
const REASONS = ['bad_response', 'unknown_user', 'bad_nonce', 'replayed', 'stale_nonce', 'malformed'] as const

/** Registers `voxgate_sip_auth_failures_total{reason}` and `voxgate_sip_auth_blocks_total` on `registry`. */
export function sipAuthMetrics(registry: Registry): SipAuthMetrics {
  const registers = [registry]
  const failures = new Counter({
    name: 'voxgate_sip_auth_failures_total',
    help: 'SIP digest answers refused, by reason (bad_response and unknown_user count towards the lockout)',
    labelNames: ['reason'],
    registers,
  })
  for (const reason of REASONS) failures.inc({ reason }, 0)
  const blocks = new Counter({
    name: 'voxgate_sip_auth_blocks_total',
    help: 'SIP sources blocked after too many failed digest answers (counted by the replica that blocked them)',
    registers,
  })
  return { failed: (reason) => failures.inc({ reason }), blocked: () => blocks.inc() }
}
