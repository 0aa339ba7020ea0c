/**
 * An agent's phone numbers (`POST /v1/agents/{agent_id}/phone_numbers`, `DELETE .../{phone_number}`), and the rule
 * that decides which numbers an organization may claim. A number routes calls to the agent that holds it, so a
 * tenant must not claim a number that is another's: a number is claimable when
 *   (a) the organization's carrier account owns it (carrier credentials stored; the carrier is asked), or
 *   (b) the operator reserved it for the organization (PUT /admin/v1/organizations/{id}/phone_numbers/{number}),
 * and a reservation for another organization wins over (a). Anything else is one 404, whether the number is free or
 * another tenant's: the answer tells nothing about other tenants.
 */
import type Router from '@koa/router'
import type { Kysely } from 'kysely'
import { z } from 'zod'
import type { Carrier, CarrierIncomingNumber } from '../../carrier/carrier.js'
import { voxError } from '../../core/errors.js'
import type { Log } from '../../core/log.js'
import { normalisePhoneNumber } from '../../core/phone.js'
import { getAgentRow } from '../../gateway/store/agents.js'
import { getCarrierCredentials } from '../../gateway/store/organizations.js'
import { reservedFor } from '../../gateway/store/phone-number-reservations.js'
import { assignPhoneNumber, unassignPhoneNumber } from '../../gateway/store/phone-numbers.js'
import type { Database } from '../../gateway/store/schema.js'
import type { ApiState } from '../auth.js'
import { readJsonObject } from '../http/body.js'
import { newRouter } from '../http/router.js'
import { parseOr400 } from '../http/validate.js'
import { capError, storeRateLimit, type RateLimit } from '../http/limits.js'
import { createWithinCap, isCapReached } from '../../gateway/store/organization-caps.js'

/** Body of POST /v1/agents/{agent_id}/phone_numbers. */
export const phoneNumberSchema = z.strictObject({
  phone_number: z.string().min(1).max(64),
  carrier_sid: z.string().min(1).max(64).optional(),
  friendly_name: z.string().min(1).max(200).optional(),
})

/** How long the carrier may take to say whether the account owns a number (a person waits on the answer). */
export const CARRIER_NUMBER_LOOKUP_TIMEOUT_MS = 10_000

/** /v1/agents/{agent_id}/phone_numbers: claim and release the agent's numbers. */
export function agentPhoneNumbersRouter(deps: {
  db: Kysely<Database>
  /** Asks an organization's carrier account whether it owns a number; undefined: no carrier path (numbers are reserved). */
  carrier?: Pick<Carrier, 'numbersClient'> | undefined
  log?: Log | undefined
  lookupTimeoutMs?: number | undefined
  rateLimit?: RateLimit | undefined
}): Router<ApiState> {
  const { db } = deps
  const rateLimit = deps.rateLimit ?? storeRateLimit(db)
  const r = newRouter<ApiState>()

  /** The carrier account's number, undefined when it has none such (or no credentials are stored); 502 on failure. */
  const carrierNumber = async (organizationId: string, e164: string, signal: AbortSignal): Promise<CarrierIncomingNumber | undefined> => {
    const credentials = await getCarrierCredentials(db, organizationId)
    if (credentials === undefined || deps.carrier === undefined) return undefined
    const timeout = AbortSignal.timeout(deps.lookupTimeoutMs ?? CARRIER_NUMBER_LOOKUP_TIMEOUT_MS)
    try {
      return await deps.carrier.numbersClient(credentials).findIncomingNumber(e164, { signal: AbortSignal.any([signal, timeout]) })
    } catch (e) {
      // The carrier's words stay in the log: they may name the account, and say nothing the caller can act on.
      deps.log?.warn({ err: e, organization_id: organizationId }, 'carrier phone number lookup failed')
      throw voxError('carrier_lookup_failed', undefined, { cause: e })
    }
  }

  r.post('/v1/agents/:agent_id/phone_numbers', async (ctx) => {
    await rateLimit(ctx.state.organizationId, 'assign_phone_number')
    const body = parseOr400(phoneNumberSchema, await readJsonObject(ctx))
    const row = await getAgentRow(db, ctx.state.organizationId, ctx.params.agent_id as string)
    if (row === undefined) throw voxError('agent_not_found')
    const number = normalisePhoneNumber(body.phone_number)
    if (number === undefined) {
      throw voxError('invalid_phone_number', `phone_number is not a valid international number: ${body.phone_number}`)
    }
    // The carrier is asked unless the operator reserved the number for this organization, whoever else holds it,
    // so a number held elsewhere takes as long to refuse as a free one.
    const reservedHere = (await reservedFor(db, number.e164)) === row.organization_id
    const owned = reservedHere ? undefined : await carrierNumber(row.organization_id, number.e164, abortedWhenGone(ctx.res))
    const res = await createWithinCap(
      db,
      row.organization_id,
      'max_phone_numbers',
      (tx) =>
        assignPhoneNumber(tx, {
          agentId: row.id,
          organizationId: row.organization_id,
          phoneNumber: number.e164,
          carrierSid: body.carrier_sid ?? owned?.sid ?? null,
          friendlyName: body.friendly_name ?? owned?.friendlyName ?? null,
          carrierOwned: owned !== undefined,
        }),
      { except: number.e164 },
    )
    if (isCapReached(res)) throw capError(res)
    if (!res.ok && res.reason === 'taken')
      throw voxError('phone_number_taken', `${number.e164} is assigned to another agent of this organization`)
    if (!res.ok) throw voxError('phone_number_not_available')
    ctx.status = 201
    ctx.body = res.assignment
  })

  r.delete('/v1/agents/:agent_id/phone_numbers/:phone_number', async (ctx) => {
    const row = await getAgentRow(db, ctx.state.organizationId, ctx.params.agent_id as string)
    if (row === undefined) throw voxError('agent_not_found')
    const number = normalisePhoneNumber(ctx.params.phone_number)
    if (number === undefined) throw voxError('invalid_phone_number')
    if (!(await unassignPhoneNumber(db, row.id, number.e164))) {
      throw voxError('not_found', `${number.e164} is not assigned to this agent`)
    }
    ctx.status = 204
  })

  return r
}

/** A signal aborted when the client goes away, so a slow carrier is not waited on for nobody. */
function abortedWhenGone(res: { once(event: 'close', f: () => void): unknown; readonly writableFinished: boolean }): AbortSignal {
  const c = new AbortController()
  // The response closes before it was written only when the connection went away (a request's own `close` comes
  // as soon as its body is read, so it says nothing).
  res.once('close', () => {
    if (!res.writableFinished) c.abort(new Error('the client went away'))
  })
  return c.signal
}
