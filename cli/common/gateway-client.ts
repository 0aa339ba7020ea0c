import { DEFAULT_PORT } from '../../server/config.js'
import { CliError } from './cli-errors.js'
import { readLoginConfig } from './config-file.js'
import type { Parsed } from './args.js'
import { stringFlag } from './args.js'

/** Where the CLI talks to and with which key. */
export interface Connection {
  gateway: string
  apiKey: string
}

/** The default gateway: a `voxgate serve` on this machine. */
export const DEFAULT_GATEWAY = `http://localhost:${DEFAULT_PORT}`

/** The gateway URL: `--gateway`, else VOXGATE_GATEWAY, else the login's, else http://localhost:8080. */
export function resolveGateway(p: Parsed, env: NodeJS.ProcessEnv): string {
  const raw = stringFlag(p, 'gateway') ?? nonEmpty(env.VOXGATE_GATEWAY) ?? readLoginConfig(env)?.gateway ?? DEFAULT_GATEWAY
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new CliError(`the gateway URL "${raw}" is not a valid URL`, 2)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`the gateway URL must be http(s): ${raw}`, 2)
  return url.href.replace(/\/+$/, '')
}

/** Gateway and key: `--api-key`, else VOXGATE_API_KEY, else the key stored by `voxgate login`. */
export function resolveConnection(p: Parsed, env: NodeJS.ProcessEnv): Connection {
  const gateway = resolveGateway(p, env)
  const login = readLoginConfig(env)
  const apiKey = stringFlag(p, 'api-key') ?? nonEmpty(env.VOXGATE_API_KEY) ?? login?.api_key
  if (apiKey === undefined) {
    throw new CliError('not signed in: run `voxgate login` (or pass --api-key / set VOXGATE_API_KEY)')
  }
  return { gateway, apiKey }
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim()
}

/** A JSON answer of the gateway. */
export interface ApiResponse {
  status: number
  body: Record<string, unknown>
}

/** One JSON request to the gateway; a network failure becomes a CliError naming the gateway. */
export async function api(
  gateway: string,
  method: string,
  path: string,
  opts: { apiKey?: string; body?: unknown; signal?: AbortSignal } = {},
): Promise<ApiResponse> {
  let res: Response
  try {
    res = await fetch(`${gateway}${path}`, {
      method,
      headers: {
        ...(opts.apiKey !== undefined && { authorization: `Bearer ${opts.apiKey}` }),
        ...(opts.body !== undefined && { 'content-type': 'application/json' }),
      },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal ?? AbortSignal.timeout(30_000),
    })
  } catch (e) {
    throw new CliError(`cannot reach the gateway at ${gateway}: ${(e as Error).message}`)
  }
  const text = await res.text()
  let body: Record<string, unknown> = {}
  try {
    body = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>)
  } catch {
    body = { error: text.slice(0, 200) }
  }
  return { status: res.status, body }
}

/** The error message of a gateway error body. */
export function errorText(r: ApiResponse): string {
  const e = r.body.error
  return `${typeof e === 'string' ? e : 'request failed'} (HTTP ${r.status}${typeof r.body.code === 'string' ? `, ${r.body.code}` : ''})`
}
