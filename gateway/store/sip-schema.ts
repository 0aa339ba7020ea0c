/** The SIP tables: the organizations' trunks and the failed digest answers the lockout counts. */
import type { ColumnType, Generated } from 'kysely'
import type { CreatedAt, Json, NullableTimestamp, Timestamp } from './column-types.js'

/** sip_trunks: an organization's SIP peer; passwords sealed with AES-256-GCM (core/secret-box.ts), never in clear. */
export interface SipTrunksTable {
  id: string
  organization_id: string
  name: string
  /** CIDR ranges as written (a bare address is one host); an INVITE from inside one may use the trunk. */
  inbound_allowed_cidrs: Json<string[]>
  inbound_username: string | null
  inbound_password_sealed: string | null
  /** `sip:` or `sips:` URI outbound calls go to; null: the trunk takes inbound calls only. */
  outbound_uri: string | null
  outbound_username: string | null
  outbound_password_sealed: string | null
  /** E.164. */
  outbound_from_number: string | null
  /** SRTP for the trunk's calls: `none`, `optional` or `required` (transports/sip/media/srtp/sdes-negotiation.ts). */
  media_encryption: Generated<'none' | 'optional' | 'required'>
  created_at: CreatedAt
  updated_at: Timestamp
}

/** sip_auth_failures: failed SIP digest answers per source and trunk, shared by every replica (sip-auth-failures.ts). */
export interface SipAuthFailuresTable {
  source: string
  trunk_id: string
  credit: number
  counted_at: Timestamp
  strikes: ColumnType<number, number | undefined, number>
  blocked_until: NullableTimestamp
}

/** The SIP tables, as the database has them. */
export interface SipTables {
  sip_trunks: SipTrunksTable
  sip_auth_failures: SipAuthFailuresTable
}
