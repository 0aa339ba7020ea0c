/**
 * /v1/sip/trunks: an organization's SIP trunks. Passwords are sealed with the gateway's
 * `SIP_CREDENTIALS_KEY` before they reach the store and never come back out: answers say `has_password`.
 */
import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import { z } from 'zod'
import type { Kysely } from 'kysely'
import type { Database } from '../../gateway/store/schema.js'
import { voxError } from '../../core/errors.js'
import { parseCidr } from '../../core/cidr.js'
import { normalisePhoneNumber } from '../../core/phone.js'
import { sealSecret } from '../../core/secret-box.js'
import {
  createSipTrunk,
  deleteSipTrunk,
  getSipTrunkRow,
  listSipTrunks,
  MAX_SIP_TRUNK_CIDRS,
  MAX_SIP_TRUNK_NAME,
  SIP_MEDIA_ENCRYPTIONS,
  toSipTrunk,
  updateSipTrunk,
  type SipTrunkFields,
} from '../../gateway/store/sip-trunks.js'
import type { ApiState } from '../auth.js'
import { readJsonObject } from '../http/body.js'
import { parseOr400 } from '../http/validate.js'
import { capError, storeRateLimit, type RateLimit } from '../http/limits.js'
import { isCapReached } from '../../gateway/store/organization-caps.js'

/** A CIDR range the parser accepts, not /0: "from anywhere" is said by leaving the list out and using a password. */
const cidr = z
  .string()
  .max(64)
  .superRefine((raw, ctx) => {
    // A zone id names an interface of one host; Postgres' inet, which matches the ranges, cannot hold it.
    if (raw.includes('%')) {
      ctx.addIssue({ code: 'custom', message: `"${raw}" has a zone id (%...): give the address alone` })
      return
    }
    try {
      if (parseCidr(raw).prefix === 0) {
        ctx.addIssue({
          code: 'custom',
          message: `"${raw}" allows every address: leave allowed_cidrs out and set a username and password instead`,
        })
      }
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: (e as Error).message })
    }
  })
  .transform((raw) => raw.trim())

const username = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[^\s:"\\]+$/, 'a user name without spaces, colons, quotes or backslashes')
/** null clears a stored password on PATCH; omitted keeps it. */
const password = z.string().min(8).max(128)
const sipUri = z
  .string()
  .max(500)
  .regex(/^sips?:[^\s<>"]+$/i, 'a sip: or sips: URI')
const fromNumber = z
  .string()
  .max(64)
  .transform((raw, ctx) => {
    const n = normalisePhoneNumber(raw)
    if (n === undefined) {
      ctx.addIssue({ code: 'custom', message: 'an international phone number (+ and country code)' })
      return z.NEVER
    }
    return n.e164
  })

const inbound = z.strictObject({
  allowed_cidrs: z.array(cidr).max(MAX_SIP_TRUNK_CIDRS).optional(),
  username: username.nullable().optional(),
  password: password.nullable().optional(),
})
const outbound = z.strictObject({
  uri: sipUri,
  username: username.nullable().optional(),
  password: password.nullable().optional(),
  from_number: fromNumber.nullable().optional(),
})

/** SRTP for the trunk's calls (docs/guides/sip-trunk.md, SRTP): `none` by default. */
const mediaEncryption = z.enum(SIP_MEDIA_ENCRYPTIONS)

/** Body of POST /v1/sip/trunks. */
export const createSipTrunkSchema = z.strictObject({
  name: z.string().trim().min(1).max(MAX_SIP_TRUNK_NAME),
  inbound: inbound.nullable().optional(),
  outbound: outbound.nullable().optional(),
  media_encryption: mediaEncryption.optional(),
})

/** Body of PATCH /v1/sip/trunks/{trunk_id}: fields given replace, omitted keep, null clears; each side merges. */
export const updateSipTrunkSchema = z.strictObject({
  name: z.string().trim().min(1).max(MAX_SIP_TRUNK_NAME).optional(),
  inbound: inbound.nullable().optional(),
  outbound: outbound.partial({ uri: true }).nullable().optional(),
  media_encryption: mediaEncryption.optional(),
})

type InboundBody = z.output<typeof inbound>
type OutboundBody = Partial<z.output<typeof outbound>>

interface SipTrunkDeps {
  db: Kysely<Database>
  /** Seals passwords; undefined: a trunk with a password is refused (503 `sip_credentials_key_missing`). */
  credentialsKey: Buffer | undefined
  /** The organization's request rates (default: the store's shared buckets on the wall clock). */
  rateLimit?: RateLimit | undefined
}

function invalid(field: string, message: string): never {
  const detail = `${field} ${message}`
  throw voxError('validation_failed', detail, { details: [detail] })
}

/** `given` over `stored`: omitted keeps, null clears, a string is sealed. */
function mergePassword(key: Buffer | undefined, given: string | null | undefined, stored: string | null): string | null {
  if (given === undefined) return stored
  if (given === null) return null
  if (key === undefined) throw voxError('sip_credentials_key_missing')
  return sealSecret(key, given)
}

/** The stored trunk with the request's fields over it, checked as a whole. */
function merge(
  key: Buffer | undefined,
  stored: SipTrunkFields | undefined,
  body: {
    name?: string | undefined
    inbound?: InboundBody | null | undefined
    outbound?: OutboundBody | null | undefined
    media_encryption?: SipTrunkFields['mediaEncryption'] | undefined
  },
): SipTrunkFields {
  const name = body.name ?? stored?.name ?? ''
  let inboundSide = stored?.inbound ?? null
  if (body.inbound === null) inboundSide = null
  else if (body.inbound !== undefined) {
    const b = body.inbound
    inboundSide = {
      allowedCidrs: b.allowed_cidrs ?? inboundSide?.allowedCidrs ?? [],
      username: b.username === undefined ? (inboundSide?.username ?? null) : b.username,
      passwordSealed: mergePassword(key, b.password, inboundSide?.passwordSealed ?? null),
    }
    const hasUser = inboundSide.username !== null
    const hasPassword = inboundSide.passwordSealed !== null
    if (hasUser !== hasPassword) invalid('inbound', 'needs a username and a password together, or neither')
    if (inboundSide.allowedCidrs.length === 0 && !hasUser) {
      invalid('inbound', 'needs allowed_cidrs, or a username and a password, or both')
    }
  }
  let outboundSide = stored?.outbound ?? null
  if (body.outbound === null) outboundSide = null
  else if (body.outbound !== undefined) {
    const b = body.outbound
    const uri = b.uri ?? outboundSide?.uri
    if (uri === undefined) invalid('outbound.uri', 'is required')
    outboundSide = {
      uri,
      username: b.username === undefined ? (outboundSide?.username ?? null) : b.username,
      passwordSealed: mergePassword(key, b.password, outboundSide?.passwordSealed ?? null),
      fromNumber: b.from_number === undefined ? (outboundSide?.fromNumber ?? null) : b.from_number,
    }
    if ((outboundSide.username !== null) !== (outboundSide.passwordSealed !== null)) {
      invalid('outbound', 'needs a username and a password together, or neither')
    }
  }
  if (inboundSide === null && outboundSide === null) invalid('inbound', 'or outbound is required: a trunk needs one side or both')
  const mediaEncryption = body.media_encryption ?? stored?.mediaEncryption ?? 'none'
  return { name, inbound: inboundSide, outbound: outboundSide, mediaEncryption }
}

/** /v1/sip/trunks: create, list, read, update and delete the organization's SIP trunks (behind the API key). */
export function sipTrunksRouter(deps: SipTrunkDeps): Router<ApiState> {
  const { db, credentialsKey } = deps
  const rateLimit = deps.rateLimit ?? storeRateLimit(db)
  const r = newRouter<ApiState>()

  r.post('/v1/sip/trunks', async (ctx) => {
    await rateLimit(ctx.state.organizationId, 'create_sip_trunk')
    const body = parseOr400(createSipTrunkSchema, await readJsonObject(ctx))
    const row = await createSipTrunk(db, ctx.state.organizationId, merge(credentialsKey, undefined, body))
    if (isCapReached(row)) throw capError(row)
    ctx.status = 201
    ctx.body = toSipTrunk(row)
  })

  r.get('/v1/sip/trunks', async (ctx) => {
    ctx.body = { trunks: (await listSipTrunks(db, ctx.state.organizationId)).map(toSipTrunk) }
  })

  r.get('/v1/sip/trunks/:trunk_id', async (ctx) => {
    const row = await getSipTrunkRow(db, ctx.state.organizationId, ctx.params.trunk_id as string)
    if (row === undefined) throw voxError('sip_trunk_not_found')
    ctx.body = toSipTrunk(row)
  })

  r.patch('/v1/sip/trunks/:trunk_id', async (ctx) => {
    const body = parseOr400(updateSipTrunkSchema, await readJsonObject(ctx))
    const id = ctx.params.trunk_id as string
    const updated = await updateSipTrunk(db, ctx.state.organizationId, id, (stored) => merge(credentialsKey, stored, body))
    if (updated === undefined) throw voxError('sip_trunk_not_found')
    ctx.body = toSipTrunk(updated)
  })

  r.delete('/v1/sip/trunks/:trunk_id', async (ctx) => {
    const row = await deleteSipTrunk(db, ctx.state.organizationId, ctx.params.trunk_id as string)
    if (row === undefined) throw voxError('sip_trunk_not_found')
    ctx.body = toSipTrunk(row)
  })

  return r
}
