// What the carrier benchmarks share: the fresh database, the IPC with the world process, and the agent the
// simulated phones dial (webhook to the world's backend, STT vendor A).
import type { ChildProcess } from 'node:child_process'

/** The address the gateway believes it has: carrier signatures are computed on it, the world rewrites it. */
export const PUBLIC_URL = 'https://voice.example.test'
/** The number every simulated phone dials. */
export const CARRIER_NUMBER = '+14155552671'

/**
 * With DATABASE_URL set, a fresh database `voxgate_bench` on that server (a deployment at this scale runs a
 * Postgres server: PGlite executes queries on the gateway's own thread); otherwise undefined (the embedded PGlite).
 */
export async function benchDatabase(): Promise<string | undefined> {
  const url = process.env.DATABASE_URL
  if (!url) return undefined
  const pg = (await import('pg')).default
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query('drop database if exists voxgate_bench with (force)')
  await admin.query('create database voxgate_bench')
  await admin.end()
  const u = new URL(url)
  u.pathname = '/voxgate_bench'
  return u.toString()
}

/** Sends a command to a child process and waits for the reply that has `key`. */
export function ask(child: ChildProcess, key: string, message?: unknown): Promise<any> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: any) => {
      if (m.error) reject(new Error(m.error))
      else if (key in m) {
        child.off('message', onMessage)
        resolve(m)
      }
    }
    child.on('message', onMessage)
    if (message !== undefined) child.send(message as never)
  })
}

/** A JSON request to the gateway's API with an organization's key. */
export type Api = (method: string, path: string, body?: unknown) => Promise<any>

/** The API of the gateway at `baseUrl` as the organization of `key`; a non-2xx answer throws. */
export function apiClient(baseUrl: string, key: string): Api {
  return async (method, path, body) => {
    const r = await fetch(baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const json = await r.json()
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`)
    return json
  }
}

/** Creates the agent the phones reach (its turns go to `backendUrl`) and gives it CARRIER_NUMBER. */
export async function setUpCarrierAgent(api: Api, backendUrl: string): Promise<void> {
  const agent = await api('POST', '/v1/agents', { template_id: 'voice-agent-webhook' })
  const cfg = structuredClone(agent.config)
  cfg.plugins = cfg.plugins.map((p: any) =>
    p.use === 'agent.webhook'
      ? { ...p, options: { ...p.options, url: backendUrl } }
      : p.use === 'stt.vendor_a'
        ? { use: 'stt.vendor_a', options: { model_id: 'nova-3', language: 'en' } }
        : p,
  )
  await api('POST', `/v1/agents/${agent.id}`, { config: cfg })
  await api('POST', `/v1/agents/${agent.id}/phone_numbers`, { phone_number: CARRIER_NUMBER })
}
