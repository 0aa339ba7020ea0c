/**
 * SIP trunks: per organization, the peers that may send calls in (by source address and/or digest credentials)
 * and the URI calls go out through. Passwords arrive here already sealed (core/secret-box.ts); the API shape
 * says only whether one is set.
 */
import { isIP } from 'node:net'
import { sql, type Kysely } from 'kysely'
import type { Database, SipTrunkRow } from './schema.js'
import { newId } from '../../core/ids.js'
import { unmappedAddress } from '../../core/cidr.js'
import { openSecret } from '../../core/secret-box.js'
import { DEFAULT_CAPS } from './organization-limits.js'
import { createWithinCap, type CapReached } from './organization-caps.js'

/** Trunks one organization may have unless the operator set another cap (`limits.max_sip_trunks`). */
export const MAX_SIP_TRUNKS_PER_ORGANIZATION = DEFAULT_CAPS.max_sip_trunks
/** CIDR ranges in one trunk's inbound allow-list. */
export const MAX_SIP_TRUNK_CIDRS = 32
/** Characters in a trunk's name. */
export const MAX_SIP_TRUNK_NAME = 100

/** Whether a trunk's audio is SRTP: never, when the peer offers it over TLS (and we offer it), or always. */
export type SipMediaEncryption = 'none' | 'optional' | 'required'

/** The settings of `media_encryption`, in the API's order. */
export const SIP_MEDIA_ENCRYPTIONS = ['none', 'optional', 'required'] as const

/** A trunk as the API shows it: never a password, only whether one is set. */
export interface SipTrunk {
  id: string
  name: string
  inbound: { allowed_cidrs: string[]; username: string | null; has_password: boolean } | null
  outbound: { uri: string; username: string | null; has_password: boolean; from_number: string | null } | null
  media_encryption: SipMediaEncryption
  created_at: string
  updated_at: string
}

/** What a trunk stores, passwords sealed; null sides are absent. */
export interface SipTrunkFields {
  name: string
  inbound: { allowedCidrs: string[]; username: string | null; passwordSealed: string | null } | null
  outbound: { uri: string; username: string | null; passwordSealed: string | null; fromNumber: string | null } | null
  /** Absent: `none`. */
  mediaEncryption?: SipMediaEncryption | undefined
}

/** The row's trunk in the API's shape. */
export function toSipTrunk(row: SipTrunkRow): SipTrunk {
  const cidrs = row.inbound_allowed_cidrs
  return {
    id: row.id,
    name: row.name,
    inbound:
      cidrs.length === 0 && row.inbound_username === null
        ? null
        : { allowed_cidrs: cidrs, username: row.inbound_username, has_password: row.inbound_password_sealed !== null },
    outbound:
      row.outbound_uri === null
        ? null
        : {
            uri: row.outbound_uri,
            username: row.outbound_username,
            has_password: row.outbound_password_sealed !== null,
            from_number: row.outbound_from_number,
          },
    media_encryption: row.media_encryption,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

/** The row's stored fields (sealed), for a merge before an update. */
export function sipTrunkFields(row: SipTrunkRow): SipTrunkFields {
  const trunk = toSipTrunk(row)
  return {
    name: row.name,
    inbound: trunk.inbound && {
      allowedCidrs: trunk.inbound.allowed_cidrs,
      username: row.inbound_username,
      passwordSealed: row.inbound_password_sealed,
    },
    outbound: trunk.outbound && {
      uri: trunk.outbound.uri,
      username: row.outbound_username,
      passwordSealed: row.outbound_password_sealed,
      fromNumber: row.outbound_from_number,
    },
    mediaEncryption: row.media_encryption,
  }
}

function columns(f: SipTrunkFields) {
  return {
    name: f.name,
    inbound_allowed_cidrs: JSON.stringify(f.inbound?.allowedCidrs ?? []),
    inbound_username: f.inbound?.username ?? null,
    inbound_password_sealed: f.inbound?.passwordSealed ?? null,
    outbound_uri: f.outbound?.uri ?? null,
    outbound_username: f.outbound?.username ?? null,
    outbound_password_sealed: f.outbound?.passwordSealed ?? null,
    outbound_from_number: f.outbound?.fromNumber ?? null,
    media_encryption: f.mediaEncryption ?? 'none',
  }
}

/**
 * Creates a trunk, unless the organization has its cap of trunks already (`limits.max_sip_trunks`, default
 * {@link MAX_SIP_TRUNKS_PER_ORGANIZATION}); the count runs with the organization row locked, so two replicas
 * creating at once cannot both pass it.
 */
export async function createSipTrunk(
  db: Kysely<Database>,
  organizationId: string,
  fields: SipTrunkFields,
): Promise<SipTrunkRow | CapReached> {
  return createWithinCap(db, organizationId, 'max_sip_trunks', (tx) =>
    tx
      .insertInto('sip_trunks')
      .values({ id: newId('sip'), organization_id: organizationId, ...columns(fields), updated_at: new Date() })
      .returningAll()
      .executeTakeFirstOrThrow(),
  )
}

/** The organization's trunks, oldest first. */
export async function listSipTrunks(db: Kysely<Database>, organizationId: string): Promise<SipTrunkRow[]> {
  return db.selectFrom('sip_trunks').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute()
}

/** One trunk of the organization, or undefined (another organization's is unknown here). */
export async function getSipTrunkRow(db: Kysely<Database>, organizationId: string, id: string): Promise<SipTrunkRow | undefined> {
  return db.selectFrom('sip_trunks').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst()
}

/**
 * Changes a trunk: `change` gets its stored fields and returns the new ones (or throws, and nothing changes). The
 * row is locked meanwhile, so two concurrent changes merge one after the other instead of one losing the other's.
 * Undefined when the organization has no such trunk.
 */
export async function updateSipTrunk(
  db: Kysely<Database>,
  organizationId: string,
  id: string,
  change: (stored: SipTrunkFields) => SipTrunkFields,
): Promise<SipTrunkRow | undefined> {
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .selectFrom('sip_trunks')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst()
    if (row === undefined) return undefined
    return tx
      .updateTable('sip_trunks')
      .set({ ...columns(change(sipTrunkFields(row))), updated_at: new Date() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()
  })
}

/** Deletes a trunk; the deleted row, or undefined when the organization has no such trunk. */
export async function deleteSipTrunk(db: Kysely<Database>, organizationId: string, id: string): Promise<SipTrunkRow | undefined> {
  return db.deleteFrom('sip_trunks').where('organization_id', '=', organizationId).where('id', '=', id).returningAll().executeTakeFirst()
}

/**
 * Every trunk, of any organization, whose inbound allow-list contains `ip` (IPv4, IPv6, or IPv4-mapped IPv6 as the
 * IPv4 address it is; a zone id dropped), oldest first. Postgres does the match with `inet <<=`, the same on PGlite and the server. Not
 * an address (a zone id, a host name): none.
 */
export async function trunksForSource(db: Kysely<Database>, ip: string): Promise<SipTrunkRow[]> {
  // A link-local source may carry its zone (`fe80::1%eth0`), which inet cannot hold; the address is what matches.
  const address = unmappedAddress(ip.trim().replace(/%[^%]*$/, ''))
  if (isIP(address) === 0) return []
  return db
    .selectFrom('sip_trunks')
    .selectAll()
    .where(
      sql<boolean>`exists (select 1 from jsonb_array_elements_text(sip_trunks.inbound_allowed_cidrs) as c(cidr) where ${address}::inet <<= c.cidr::inet)`,
    )
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}

/**
 * Trunks without an allow-list, only a user name and password (digest from anywhere), of any organization,
 * oldest first; with `username`, only those with that user name.
 */
export async function credentialOnlyTrunks(db: Kysely<Database>, username?: string): Promise<SipTrunkRow[]> {
  let q = db
    .selectFrom('sip_trunks')
    .selectAll()
    .where('inbound_username', 'is not', null)
    .where('inbound_password_sealed', 'is not', null)
    .where(sql<boolean>`jsonb_array_length(sip_trunks.inbound_allowed_cidrs) = 0`)
  if (username !== undefined) q = q.where('inbound_username', '=', username)
  return q.orderBy('created_at').orderBy('id').execute()
}

/** A trunk's passwords in clear, for the SIP endpoint's digest checks and answers; throws under a wrong key. */
export function sipTrunkPasswords(row: SipTrunkRow, key: Buffer): { inbound: string | null; outbound: string | null } {
  return {
    inbound: row.inbound_password_sealed === null ? null : openSecret(key, row.inbound_password_sealed),
    outbound: row.outbound_password_sealed === null ? null : openSecret(key, row.outbound_password_sealed),
  }
}
