import { CallWatchdog } from './call-watchdog.js'
import type { CallDeps, CallTimeouts } from './call-deps.js'
import { endWaitingCall } from './waiting-calls.js'
import { TransferLegs } from '../transfer/transfer-legs.js'

/** Builds the call deps of a process; its watchdog ends (and hangs up) a waiting call whose deadline passed. */
export function createCallDeps(
  base: Pick<
    CallDeps,
    | 'db'
    | 'log'
    | 'carrier'
    | 'sessions'
    | 'webhookPolicy'
    | 'webhookDelivery'
    | 'egress'
    | 'sipDialer'
    | 'sipCredentialsKey'
    | 'transferLegs'
  >,
  timeouts: CallTimeouts = {},
): CallDeps {
  // The deps and the watchdog refer to each other: the watchdog ends calls through the deps.
  const watchdog = new CallWatchdog((sessionId, reason) => {
    void endWaitingCall(deps, sessionId, { endReason: reason, hangup: true }).catch((e: unknown) =>
      base.log.error({ err: e, session_id: sessionId }, 'could not end a carrier call that timed out'),
    )
  })
  const deps: CallDeps = {
    ...base,
    watchdog,
    streamConnectTimeoutMs: timeouts.streamConnectTimeoutMs ?? 30_000,
    ringTimeoutSec: timeouts.ringTimeoutSec ?? 60,
    statusGraceMs: timeouts.statusGraceMs ?? 120_000,
    outboundQueueMaxWaitMs: timeouts.outboundQueueMaxWaitMs ?? 30_000,
    transferLegs: base.transferLegs ?? new TransferLegs(),
  }
  return deps
}
