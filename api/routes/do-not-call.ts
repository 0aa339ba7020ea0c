/**
 * /v1/dnc: the organization's do-not-call list. Add numbers (JSON `{ phone_numbers }` or a CSV whose first
 * column holds them, a header allowed), remove one, check one. Every outbound call, a campaign's or
 * initiate_outbound's, is checked against it before it is dialled.
 */
import type Router from '@koa/router'
import type { Kysely } from 'kysely'
import { z } from 'zod'
import { parseCsv } from '../../core/csv.js'
import { voxError } from '../../core/errors.js'
import { normalisePhoneNumber } from '../../core/phone.js'
import { addToDoNotCall, doNotCallEntry, removeFromDoNotCall } from '../../gateway/store/do-not-call.js'
import type { Database } from '../../gateway/store/schema.js'
import type { ApiState } from '../auth.js'
import { readBody, readRaw } from '../http/body.js'
import { newRouter } from '../http/router.js'
import { parseOr400 } from '../http/validate.js'

/** Most numbers one request adds. */
export const MAX_DNC_BATCH = 100_000
const MAX_DNC_BODY_BYTES = 8 * 1024 * 1024

/** Body of POST /v1/dnc as JSON (also the API reference's schema). */
export const addDncSchema = z.strictObject({ phone_numbers: z.array(z.string().max(64)).min(1).max(MAX_DNC_BATCH) })

/** The do-not-call routes, for the API-key-protected /v1 router. */
export function doNotCallRouter(deps: { db: Kysely<Database> }): Router<ApiState> {
  const { db } = deps
  const r = newRouter<ApiState>()

  r.post('/v1/dnc', async (ctx) => {
    const type = (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase()
    let raw: string[]
    if (type === 'text/csv') {
      const rows = parseCsv((await readRaw(ctx, MAX_DNC_BODY_BYTES)).toString('utf8')).map((cells) => cells[0]?.trim() ?? '')
      raw = rows[0] === 'phone_number' ? rows.slice(1) : rows
      if (raw.length > MAX_DNC_BATCH) throw voxError('validation_failed', `a batch holds at most ${MAX_DNC_BATCH} numbers`)
    } else {
      raw = parseOr400(addDncSchema, (await readBody(ctx, MAX_DNC_BODY_BYTES)).value).phone_numbers
    }
    const numbers: string[] = []
    const errors: { row: number; phone_number: string; error: string }[] = []
    raw.forEach((value, i) => {
      const n = normalisePhoneNumber(value)
      if (n === undefined)
        errors.push({ row: i + 1, phone_number: value.slice(0, 64), error: 'not a valid phone number in international form' })
      else numbers.push(n.e164)
    })
    const added = await addToDoNotCall(db, ctx.state.organizationId, numbers, type === 'text/csv' ? 'csv' : 'api')
    ctx.body = { received: raw.length, added, already_listed: numbers.length - added, rejected: errors.length, errors }
  })

  r.get('/v1/dnc/:phone_number', async (ctx) => {
    const number = e164(ctx.params.phone_number as string)
    const entry = await doNotCallEntry(db, ctx.state.organizationId, number)
    ctx.body = {
      phone_number: number,
      listed: entry !== undefined,
      ...(entry !== undefined && { source: entry.source, added_at: entry.created_at.toISOString() }),
    }
  })

  r.delete('/v1/dnc/:phone_number', async (ctx) => {
    const number = e164(ctx.params.phone_number as string)
    const removed = await removeFromDoNotCall(db, ctx.state.organizationId, number)
    ctx.body = { phone_number: number, removed }
  })
  return r
}

function e164(value: string): string {
  const n = normalisePhoneNumber(value)
  if (n === undefined)
    throw voxError('invalid_phone_number', 'phone_number is not a valid phone number in international form (+ and country code)')
  return n.e164
}
