/**
 * The digest step of the SIP admission: which trunk, if any, an INVITE's credentials prove. It runs only once
 * the INVITE carries credentials and the source is not blocked, and its answer never depends on the dialled
 * number: wrong credentials are wrong whatever the number (the number only orders the trunks tried, so a user
 * name shared by two trunks finds the one the number belongs to first).
 */
import type { DigestProof, DigestTrunk, InviteDigest } from '../../../gateway/admission/sip-trunk-admission.js'
import type { DigestCheck, DigestServer } from '../calls/digest-auth.js'
import { parseAuthHeader } from '../message/digest-header-codec.js'

/** The digest of one INVITE from `source`, answered with this replica's nonces. */
export function inviteDigest(
  digest: DigestServer,
  request: { readonly method: string; readonly uri: string; readonly source: string },
): InviteDigest {
  return {
    challenges: (stale) => digest.challenges({ stale, source: request.source }),
    check: (authorization, trunks, preferredOrg) => checkTrunkDigest(digest, request, authorization, trunks, preferredOrg),
  }
}

/**
 * Checks `authorization` against the trunks among `guarded` with its user name, those of `preferredOrg` first;
 * a user name no trunk has still costs one digest, so it looks like a wrong password from outside.
 */
function checkTrunkDigest(
  digest: DigestServer,
  request: { readonly method: string; readonly uri: string; readonly source: string },
  authorization: string,
  guarded: readonly DigestTrunk[],
  preferredOrg: string | undefined,
): DigestProof {
  const username = parseAuthHeader(authorization)?.params.get('username')
  const named = guarded
    .filter((t) => username !== undefined && t.username === username)
    .sort((a, b) => Number(b.organizationId === preferredOrg) - Number(a.organizationId === preferredOrg))
  if (named.length === 0) {
    const checked = digest.check(authorization, request, () => undefined) as Exclude<DigestCheck, { ok: true }>
    return { ok: false, reason: checked.reason, trunkId: undefined }
  }
  let failure: DigestProof | undefined
  for (const trunk of named) {
    const password = trunk.password()
    if (password === undefined) return { ok: false, reason: 'no_key', trunkId: trunk.id }
    const checked = digest.check(authorization, request, (user) => (user === username ? { password } : undefined))
    if (checked.ok) return { ok: true, trunkId: trunk.id }
    // Only a wrong password is worth trying on the next trunk of that name; any other failure is the same on all.
    if (checked.reason !== 'bad_response') return { ok: false, reason: checked.reason, trunkId: trunk.id }
    failure ??= { ok: false, reason: checked.reason, trunkId: trunk.id }
  }
  return failure as DigestProof
}
