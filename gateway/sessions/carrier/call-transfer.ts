/**
 * `response.transfer` on a phone call (an addition to the SPEC), one transferer per channel. A carrier call gets
 * new markup that dials the target, and the call leaves its media stream; this works from whichever replica runs
 * the session: the call sid and the credentials come from the database. A SIP call transfers itself by REFER when
 * its peer accepts it; a SIP peer that does not is bridged by the gateway instead (session-call-control.ts sends it to
 * sip-bridge-transfer.ts before any transferer is asked).
 */
import { voxError } from '../../../core/errors.js'
import type { TransferTarget } from '../../../core/transfer-target.js'
import { getCarrierCredentials } from '../../store/organizations.js'
import type { Kysely } from 'kysely'
import type { Log } from '../../../core/log.js'
import type { Database, SessionRow } from '../../store/schema.js'
import type { CallCarrier } from './call-carrier.js'
import type { CallReferral, SessionTransport } from '../ports/session-port.js'

/** Moves a live call elsewhere; throws a registered error (`transfer_failed`, `transfer_not_supported`). */
export interface CallTransferer {
  transfer(row: SessionRow, target: TransferTarget, signal: AbortSignal): Promise<void>
}

/** What a transfer needs of the process (its call deps have it all). */
export interface TransferDeps {
  readonly db: Kysely<Database>
  readonly carrier: Pick<CallCarrier, 'callsClient' | 'markup'>
  readonly log: Log
}

/** The transferer of a process's carrier. */
export function carrierTransferer(deps: () => TransferDeps): CallTransferer {
  return {
    async transfer(row, target, signal) {
      const d = deps()
      if (row.call_sid === null) throw voxError('transfer_not_supported', 'this call has no carrier call sid: it cannot be transferred')
      const credentials = await getCarrierCredentials(d.db, row.organization_id)
      if (credentials === undefined) {
        throw voxError('transfer_failed', 'carrier credentials are not configured for this organization: the call cannot be transferred')
      }
      try {
        await d.carrier.callsClient(credentials).updateCall(row.call_sid, d.carrier.markup.dial(target), { signal })
      } catch (e) {
        if (signal.aborted) throw e
        const message = e instanceof Error ? e.message : String(e)
        const code = (e as { carrierCode?: unknown }).carrierCode
        d.log.warn({ session_id: row.id, call_sid: row.call_sid, carrier_code: code }, `transfer refused by the carrier: ${message}`)
        throw voxError(
          'transfer_failed',
          `the carrier could not transfer the call: ${message}${typeof code === 'number' ? ` (carrier error ${code})` : ''}`,
          {
            cause: e,
          },
        )
      }
    },
  }
}

/**
 * The transferer of one SIP call: REFER through the call's own dialog when the peer accepts it, else
 * `transfer_not_supported` (a session with a warm transfer slot bridges such a call before asking).
 */
export function sipTransferer(referral: CallReferral | undefined): CallTransferer {
  return {
    async transfer(_row, target, signal) {
      if (referral?.supported === true) return referral.refer(target, signal)
      throw voxError(
        'transfer_not_supported',
        'the SIP peer does not accept REFER (its INVITE did not list it in Allow), and the session cannot bridge the call',
      )
    },
  }
}

/** The transferers a process gives its sessions, per channel. */
export interface ChannelTransferers {
  /** Moves carrier calls elsewhere (`response.transfer`); without it every carrier transfer fails. */
  callTransfer?: CallTransferer | undefined
}

/** The channel's transferer: the carrier's, or a SIP call's own (REFER); none for others. */
export function transfererFor(
  transport: Pick<SessionTransport, 'kind' | 'referral'>,
  deps: ChannelTransferers,
): CallTransferer | undefined {
  if (transport.kind === 'carrier') return deps.callTransfer
  if (transport.kind === 'sip') return sipTransferer(transport.referral)
  return undefined
}
