/** The console's HTTP client: every call carries the signed-in credentials; failures carry the SPEC error body. */

/** How the person signed in: an organization API key, or the admin token acting for one organization. */
export type Credentials =
  | { kind: 'key'; key: string; organizationId: string; organizationName: string }
  | { kind: 'admin'; token: string; organizationId: string; organizationName: string }

/** A failed request: HTTP status and the error body's code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

/** Header naming the organization the admin token acts for (api/auth.ts). */
const ACT_FOR = 'X-Voxgate-Organization'

/** Sends a JSON request with a bearer token; returns the parsed body (undefined for 204). */
export async function request<T>(
  method: string,
  path: string,
  bearer: string,
  opts: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${bearer}`, ...opts.headers }
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(path, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: opts.signal,
  })
  if (res.status === 204) return undefined as T
  const text = await res.text()
  let parsed: unknown
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {
    parsed = undefined
  }
  if (!res.ok) {
    const err = (parsed ?? {}) as { error?: string; code?: string }
    throw new ApiError(res.status, err.code ?? 'http_error', err.error ?? `HTTP ${res.status}`)
  }
  return parsed as T
}

/** The bearer token and extra headers that make a /v1 request on behalf of the signed-in organization. */
export function authOf(creds: Credentials): { bearer: string; headers: Record<string, string> } {
  return creds.kind === 'key' ? { bearer: creds.key, headers: {} } : { bearer: creds.token, headers: { [ACT_FOR]: creds.organizationId } }
}

/** A client bound to one sign-in. */
export class ConsoleApi {
  constructor(readonly creds: Credentials) {}

  /** A /v1 request as the signed-in organization. */
  v1<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const auth = authOf(this.creds)
    return request<T>(method, path, auth.bearer, { body, headers: auth.headers, signal })
  }

  /** Fetches a binary resource (the recording) with the credentials, as a Blob. */
  async blob(path: string, signal?: AbortSignal): Promise<Blob> {
    const auth = authOf(this.creds)
    const res = await fetch(path, { headers: { authorization: `Bearer ${auth.bearer}`, ...auth.headers }, signal })
    if (!res.ok) throw new ApiError(res.status, 'http_error', `HTTP ${res.status}`)
    return res.blob()
  }
}

const STORAGE_KEY = 'voxgate.console.credentials'

/** The sign-in kept for this tab (sessionStorage: gone when the tab closes). */
export function loadCredentials(): Credentials | undefined {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY)
    return raw ? (JSON.parse(raw) as Credentials) : undefined
  } catch {
    return undefined
  }
}

export function saveCredentials(creds: Credentials | undefined): void {
  if (creds === undefined) sessionStorage.removeItem(STORAGE_KEY)
  else sessionStorage.setItem(STORAGE_KEY, JSON.stringify(creds))
}
