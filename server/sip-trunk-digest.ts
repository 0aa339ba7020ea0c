/**
 * The digest step of the SIP admission: which trunk, if any, an INVITE's credentials prove. It runs only once
 * the INVITE carries credentials and the source is not blocked, and its answer never depends on the dialled
 * number: wrong credentials are wrong whatever the number (the number only orders the trunks tried, so a user
 * name shared by two trunks finds the one the number belongs to first).
 */
import type { SipTrunkRow } from '../gateway/store/schema.js'
import { sipTrunkPasswords } from '../gateway/store/sip-trunks.js'
import type { DigestCheck, DigestFailure, DigestServer } from '../transports/sip/calls/digest-auth.js'
import { parseAuthHeader } from '../transports/sip/message/digest-header-codec.js'

/** A trunk that asks for digest: a user name and a password. */
export function asksDigest(trunk: SipTrunkRow): boolean {
  return trunk.inbound_username !== null && trunk.inbound_password_sealed !== null
}

/** What the credentials prove. */
export type TrunkDigest =
  | { readonly ok: true; readonly trunk: SipTrunkRow }
  /** `trunkId`: the trunk whose password was tested (none when the user name is no trunk's). */
  | { readonly ok: false; readonly reason: DigestFailure; readonly trunkId: string | undefined }
  /** SIP_CREDENTIALS_KEY cannot open the trunk's password: the operator's problem, not the caller's. */
  | { readonly ok: false; readonly reason: 'no_key'; readonly trunkId: string }

/**
 * Checks `authorization` against the trunks among `guarded` with its user name, those of `preferredOrg` first;
 * a user name no trunk has still costs one digest, so it looks like a wrong password from outside.
 */
export function checkTrunkDigest(input: {
  readonly digest: DigestServer
  readonly credentialsKey: Buffer | undefined
  readonly guarded: readonly SipTrunkRow[]
  readonly authorization: string
  readonly request: { readonly method: string; readonly uri: string; readonly source: string }
  readonly preferredOrg: string | undefined
}): TrunkDigest {
  const username = parseAuthHeader(input.authorization)?.params.get('username')
  const named = input.guarded
    .filter((t) => username !== undefined && t.inbound_username === username)
    .sort((a, b) => Number(b.organization_id === input.preferredOrg) - Number(a.organization_id === input.preferredOrg))
  if (named.length === 0) {
    const checked = input.digest.check(input.authorization, input.request, () => undefined) as Exclude<DigestCheck, { ok: true }>
    return { ok: false, reason: checked.reason, trunkId: undefined }
  }
  let failure: TrunkDigest | undefined
  for (const trunk of named) {
    const password = openPassword(trunk, input.credentialsKey)
    if (password === undefined) return { ok: false, reason: 'no_key', trunkId: trunk.id }
    const checked = input.digest.check(input.authorization, input.request, (user) => (user === username ? { password } : undefined))
    if (checked.ok) return { ok: true, trunk }
    // Only a wrong password is worth trying on the next trunk of that name; any other failure is the same on all.
    if (checked.reason !== 'bad_response') return { ok: false, reason: checked.reason, trunkId: trunk.id }
    failure ??= { ok: false, reason: checked.reason, trunkId: trunk.id }
  }
  return failure as TrunkDigest
}

function openPassword(trunk: SipTrunkRow, key: Buffer | undefined): string | undefined {
  if (key === undefined) return undefined
  try {
    return sipTrunkPasswords(trunk, key).inbound ?? undefined
  } catch {
    return undefined
  }
}
