/**
 * The operator gives numbers out (`/admin/v1/organizations/{id}/phone_numbers`): a number on a SIP trunk, or on a
 * carrier account the gateway cannot ask, becomes claimable by the organization's agents once reserved for it.
 * A number another organization has (reserved or assigned) moves only when the operator says so (`move: true`).
 */
import type Router from '@koa/router'
import type { Kysely } from 'kysely'
import { z } from 'zod'
import { voxError } from '../../core/errors.js'
import type { Log } from '../../core/log.js'
import { normalisePhoneNumber } from '../../core/phone.js'
import { getOrganizationRow } from '../../gateway/store/organizations.js'
import { organizationNumbers, releasePhoneNumber, reservePhoneNumber } from '../../gateway/store/phone-number-reservations.js'
import type { Database } from '../../gateway/store/schema.js'
import { readJsonObject } from '../http/body.js'
import { parseOr400 } from '../http/validate.js'

/** Body of PUT /admin/v1/organizations/{id}/phone_numbers/{phone_number} (may be empty). */
export const reserveNumberSchema = z.strictObject({
  /** Take the number from the organization that has it (its agent stops receiving its calls). */
  move: z.boolean().optional(),
})

function e164Or400(raw: string | undefined): string {
  const number = normalisePhoneNumber(raw ?? '')
  if (number === undefined) throw voxError('invalid_phone_number', `not a valid international number: ${raw ?? ''}`)
  return number.e164
}

/** Adds the phone number routes to the admin router (behind its admin token check). */
export function adminPhoneNumberRoutes(r: Router, deps: { db: Kysely<Database>; log: Log }): void {
  const { db, log } = deps

  r.get('/organizations/:id/phone_numbers', async (ctx) => {
    const org = await getOrganizationRow(db, ctx.params.id as string)
    if (org === undefined) throw voxError('organization_not_found')
    ctx.body = { phone_numbers: await organizationNumbers(db, org.id) }
  })

  r.put('/organizations/:id/phone_numbers/:phone_number', async (ctx) => {
    const body = parseOr400(reserveNumberSchema, await readJsonObject(ctx))
    const phoneNumber = e164Or400(ctx.params.phone_number)
    const organizationId = ctx.params.id as string
    const res = await reservePhoneNumber(db, { organizationId, phoneNumber, move: body.move === true })
    if (!res.ok && res.reason === 'organization_not_found') throw voxError('organization_not_found')
    if (!res.ok) {
      throw voxError(
        'phone_number_reserved_elsewhere',
        `${phoneNumber} is reserved for or assigned to organization ${res.reason === 'held_elsewhere' ? res.organizationId : ''}: send {"move": true} to move it here`,
      )
    }
    if (res.movedFrom !== undefined) {
      log.info({ phone_number: phoneNumber, organization_id: organizationId, from_organization_id: res.movedFrom }, 'phone number moved')
    } else if (res.created) log.info({ phone_number: phoneNumber, organization_id: organizationId }, 'phone number reserved')
    ctx.status = res.created ? 201 : 200
    ctx.body = res.number
  })

  r.delete('/organizations/:id/phone_numbers/:phone_number', async (ctx) => {
    const phoneNumber = e164Or400(ctx.params.phone_number)
    const organizationId = ctx.params.id as string
    if (!(await releasePhoneNumber(db, organizationId, phoneNumber))) {
      throw voxError('not_found', `${phoneNumber} is not reserved for this organization`)
    }
    log.info({ phone_number: phoneNumber, organization_id: organizationId }, 'phone number released')
    ctx.status = 204
  })
}
