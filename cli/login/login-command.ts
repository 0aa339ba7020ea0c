import { hostname } from 'node:os'
import { parseCommand, stringFlag } from '../common/args.js'
import { CliError } from '../common/cli-errors.js'
import { DEFAULT_GATEWAY, api, errorText, resolveConnection, resolveGateway } from '../common/gateway-client.js'
import { configPath, readLoginConfig, removeLoginConfig, writeLoginConfig } from '../common/config-file.js'
import { openBrowser } from './open-browser.js'

export const LOGIN_USAGE = `usage: voxgate login [--gateway <url>]

Links this terminal to an organization: shows a short code and opens the gateway's sign-in page (the URL is
printed too). Sign in there with an organization API key, or with the admin token and then pick the organization
to act for, check that the page shows the same code, and approve. The CLI then receives an API key of its own
for that organization, stored in $XDG_CONFIG_HOME/voxgate/config.json (else ~/.config/voxgate/config.json) with
mode 0600. Codes expire after 10 minutes and work once.

  --gateway <url>   the gateway (default: VOXGATE_GATEWAY, then http://localhost:8080)
`
export const LOGOUT_USAGE = `usage: voxgate logout

Revokes the CLI's API key at the gateway and removes the stored login.
`
export const WHOAMI_USAGE = `usage: voxgate whoami [--gateway <url>] [--api-key <key>]

Prints the gateway and the organization the CLI acts for (and the key's id).
`

/** `voxgate login`. */
export async function loginCommand(args: string[], env: NodeJS.ProcessEnv, out: (s: string) => void): Promise<number> {
  const p = parseCommand(args, { gateway: { type: 'string' } })
  if (p.values.help === true) {
    out(LOGIN_USAGE)
    return 0
  }
  // The login's own gateway is not a default for a new login: a new one starts from the flag or the environment.
  const gateway = resolveGateway(
    { values: { gateway: stringFlag(p, 'gateway') ?? env.VOXGATE_GATEWAY ?? DEFAULT_GATEWAY }, positionals: [] },
    env,
  )
  const start = await api(gateway, 'POST', '/v1/cli/device_authorizations', {
    body: { client_name: `voxgate CLI on ${hostname()}`.slice(0, 100) },
  })
  if (start.status !== 201) throw new CliError(`the gateway at ${gateway} cannot start a sign-in: ${errorText(start)}`)
  const s = start.body as {
    device_code: string
    user_code: string
    verification_uri_complete: string
    expires_in: number
    interval: number
  }
  const opened = openBrowser(s.verification_uri_complete, env)
  out(
    `Your code: ${s.user_code}\n` +
      `${opened ? 'A browser is opening the sign-in page; if it does not, open' : 'Open'} this URL to sign in and approve:\n` +
      `  ${s.verification_uri_complete}\n` +
      `Check that the page shows the same code. Waiting (the code expires in ${Math.round(s.expires_in / 60)} minutes)...\n`,
  )

  const intervalMs = Math.max(1, s.interval) * 1000
  const deadline = Date.now() + s.expires_in * 1000 + 5_000
  for (;;) {
    await new Promise((r) => setTimeout(r, intervalMs))
    const r = await api(gateway, 'POST', '/v1/cli/device_authorizations/token', { body: { device_code: s.device_code } })
    if (r.status === 200) {
      const t = r.body as { api_key: string; key_id: string; organization_id: string; organization_name: string }
      const previous = readLoginConfig(env)
      const file = writeLoginConfig(
        { gateway, api_key: t.api_key, key_id: t.key_id, organization_id: t.organization_id, organization_name: t.organization_name },
        env,
      )
      // The key of an earlier login on the same gateway is not needed any more: revoke it (best effort).
      if (previous !== undefined && previous.gateway === gateway && previous.api_key !== t.api_key) {
        await api(gateway, 'DELETE', '/v1/api_keys/current', { apiKey: previous.api_key }).catch(() => undefined)
      }
      out(`Signed in to ${gateway} for organization ${t.organization_name} (${t.organization_id}).\nKey ${t.key_id} stored in ${file}\n`)
      return 0
    }
    const code = r.body.code
    if (code === 'authorization_pending' || code === 'slow_down') {
      if (Date.now() > deadline) throw new CliError('the code expired before it was approved: run voxgate login again')
      continue
    }
    if (code === 'expired_token') throw new CliError('the code expired before it was approved: run voxgate login again')
    if (code === 'access_denied') throw new CliError('the sign-in was denied on the page')
    if (code === 'invalid_grant') throw new CliError('the code is no longer valid (already used): run voxgate login again')
    throw new CliError(`sign-in failed: ${errorText(r)}`)
  }
}

/** `voxgate logout`: revokes the stored key, then forgets it. */
export async function logoutCommand(args: string[], env: NodeJS.ProcessEnv, out: (s: string) => void): Promise<number> {
  const p = parseCommand(args, {})
  if (p.values.help === true) {
    out(LOGOUT_USAGE)
    return 0
  }
  const login = readLoginConfig(env)
  if (login === undefined) {
    out('Not signed in.\n')
    return 0
  }
  const r = await api(login.gateway, 'DELETE', '/v1/api_keys/current', { apiKey: login.api_key })
  if (r.status === 204) {
    removeLoginConfig(env)
    out(`Signed out: key ${login.key_id} revoked at ${login.gateway}; ${configPath(env)} removed.\n`)
    return 0
  }
  if (r.body.code === 'invalid_api_key') {
    removeLoginConfig(env)
    out(`Signed out: the key was already revoked or unknown at ${login.gateway}; ${configPath(env)} removed.\n`)
    return 0
  }
  throw new CliError(`the gateway did not revoke the key (the login is kept, retry): ${errorText(r)}`)
}

/** `voxgate whoami`. */
export async function whoamiCommand(args: string[], env: NodeJS.ProcessEnv, out: (s: string) => void): Promise<number> {
  const p = parseCommand(args, { gateway: { type: 'string' }, 'api-key': { type: 'string' } })
  if (p.values.help === true) {
    out(WHOAMI_USAGE)
    return 0
  }
  const conn = resolveConnection(p, env)
  const r = await api(conn.gateway, 'GET', '/v1/whoami', { apiKey: conn.apiKey })
  if (r.status !== 200) {
    throw new CliError(
      r.body.code === 'invalid_api_key'
        ? `the key is not valid at ${conn.gateway} (revoked?): run voxgate login`
        : `whoami failed: ${errorText(r)}`,
    )
  }
  const w = r.body as { organization_id: string; organization_name: string; key_id: string | null }
  out(`gateway: ${conn.gateway}\norganization: ${w.organization_name} (${w.organization_id})\nkey: ${w.key_id ?? 'the admin token'}\n`)
  return 0
}
