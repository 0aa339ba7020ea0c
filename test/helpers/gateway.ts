/** Starts a real gateway on port 0 over a real test database, and a small HTTP client for it. */
import { loadConfig, vendorAvailability, type GatewayConfig } from '../../server/config.js'
import { silentLogger, type Log } from '../../core/log.js'
import { bootstrap, type FirstStart } from '../../server/bootstrap.js'
import { startGateway, type Gateway } from '../../server/app.js'
import type { GatewayDeps } from '../../server/gateway-deps.js'
import type { Store } from '../../gateway/store/database.js'
import type { SessionRow } from '../../gateway/store/schema.js'
import { testDb, type TestDb } from './db.js'

export const ADMIN_TOKEN = 'test-admin-token-0123456789'

/** A gateway under test. */
export interface TestGateway {
  gateway: Gateway
  url: string
  db: TestDb
  store: Store
  config: GatewayConfig
  /** The default organization's API key created at first start. */
  apiKey: string
  orgId: string
  /** What first start made (the key, the demo agent and its link); undefined on a database that had it. */
  firstStart: FirstStart | undefined
  request(method: string, path: string, opts?: RequestOptions): Promise<TestResponse>
  close(): Promise<void>
}

export interface RequestOptions {
  key?: string | null
  admin?: boolean
  body?: unknown
  rawBody?: string
  headers?: Record<string, string>
}

export interface TestResponse {
  status: number
  body: any
  text: string
  headers: Headers
}

/** Starts a gateway; `env` overrides the environment it is configured from. */
export async function startTestGateway(
  env: Record<string, string> = {},
  opts: {
    log?: Log
    db?: TestDb
    deps?: Partial<Pick<GatewayDeps, 'sessionOverrides' | 'attachBrowser' | 'carrier' | 'recordingSink' | 'clock' | 'campaigns'>>
  } = {},
): Promise<TestGateway> {
  const db = opts.db ?? (await testDb())
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_TOKEN,
    ALLOW_INSECURE_WEBHOOKS: '1',
    LOG_LEVEL: 'silent',
    ...env,
  })
  const boot = await bootstrap(db.store.db, { vendors: vendorAvailability(config), publicUrl: config.publicUrl })
  const gateway = await startGateway({
    config,
    store: db.store,
    log: opts.log ?? silentLogger(),
    sessionOverrides: { webhookDelivery: { backoffMs: [20, 40, 80], timeoutMs: 2_000 }, ...opts.deps?.sessionOverrides },
    attachBrowser: opts.deps?.attachBrowser,
    carrier: opts.deps?.carrier,
    recordingSink: opts.deps?.recordingSink,
    clock: opts.deps?.clock,
    campaigns: opts.deps?.campaigns,
  })
  // A second gateway on the same database (a restart, a replica) finds the organization already there.
  const firstStart = boot.firstStart
  const apiKey = firstStart?.apiKey ?? ''
  const orgId = firstStart?.organizationId ?? ''
  const url = gateway.url
  return {
    gateway,
    url,
    db,
    store: db.store,
    config,
    apiKey,
    orgId,
    firstStart,
    async request(method, path, o = {}) {
      const headers: Record<string, string> = { ...o.headers }
      const key = o.admin ? ADMIN_TOKEN : o.key === undefined ? apiKey : o.key
      if (key !== null) headers.authorization = `Bearer ${key}`
      let body: string | undefined = o.rawBody
      if (o.body !== undefined) {
        body = JSON.stringify(o.body)
        headers['content-type'] ??= 'application/json'
      }
      const res = await fetch(url + path, { method, headers, body })
      const text = await res.text()
      let parsed: unknown
      try {
        parsed = text ? JSON.parse(text) : undefined
      } catch {
        parsed = undefined
      }
      return { status: res.status, body: parsed, text, headers: res.headers }
    },
    async close() {
      await gateway.close()
      if (!opts.db) await db.cleanup()
    },
  }
}

/** A fresh session row of `agentId` (authorized, not connected), for tests that hang a recording or a transcript on it. */
export async function authorizedSessionRow(gw: TestGateway, agentId: string): Promise<SessionRow> {
  const auth = await gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: agentId } })
  if (auth.status !== 200) throw new Error(`authorize_session: ${auth.status} ${auth.text}`)
  return gw.store.db.selectFrom('sessions').selectAll().where('conversation_id', '=', auth.body.conversation_id).executeTakeFirstOrThrow()
}
