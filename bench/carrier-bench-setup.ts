// What the carrier benchmarks share: the fresh database, the IPC with the world process, and the agent the
// simulated phones dial (webhook to the world's backend, STT vendor A).
import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { setPriority, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig, vendorAvailability } from '../server/config.js'
import { silentLogger } from '../core/log.js'
import { bootstrap } from '../server/bootstrap.js'
import { startGateway, type Gateway } from '../server/app.js'
import { openStore, type Store } from '../gateway/store/database.js'
import type { Stall } from './stalls.js'
import { missingGatewayNodeOptions } from '../server/gc-tuning.js'

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

/** Creates the agent the phones reach (its turns go to `backendUrl`) and gives it CARRIER_NUMBER (reserved for it first). */
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

/** Starts the stall sentinel, above normal priority where allowed, so only a machine pause can stall it. */
export async function startSentinel(): Promise<{
  /** Every stall so far; the sentinel then exits. */
  report(): Promise<Stall[]>
  /** The stalls that ended after `from` (a `sharedNow()` time); the sentinel goes on. */
  since(from: number): Promise<Stall[]>
}> {
  const sentinel = fork(fileURLToPath(new URL('./stall-sentinel.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: 'inherit',
  })
  try {
    if (sentinel.pid !== undefined) setPriority(sentinel.pid, -5)
  } catch {
    // Not permitted (no root): at normal priority it is still idle, so the scheduler wakes it promptly.
  }
  await ask(sentinel, 'ready')
  return {
    report: async () => ((await ask(sentinel, 'stalls', { cmd: 'report' })) as { stalls: Stall[] }).stalls,
    since: async (from: number) => ((await ask(sentinel, 'stalls', { cmd: 'since', from })) as { stalls: Stall[] }).stalls,
  }
}

/** The world process and a gateway in this process on a fresh database, its agent on CARRIER_NUMBER. */
export interface BenchGateway {
  world: ChildProcess
  gateway: Gateway
  store: Store
  /** Closes the gateway and the store and removes the data folder (the world is stopped by its caller). */
  close(): Promise<void>
}

/**
 * The SIP settings of a bench gateway with SIP on: a free SIP port on 127.0.0.1 and an RTP range for 1,000 calls
 * away from the tests' ranges (30000-50200), so a bench and a test run can share the machine.
 */
const BENCH_SIP_ENV = {
  SIP_PORT: '0',
  SIP_HOST: '127.0.0.1',
  SIP_PUBLIC_HOST: '127.0.0.1',
  RTP_PORT_MIN: '52000',
  RTP_PORT_MAX: '54000',
}

/**
 * Starts the world (at low priority) and a gateway; `recording` turns call recording on for the organization;
 * `frameTiming` hears the synchronous handling time (ms) of each media frame, as the carrier transport reports it
 * (a bench that runs for an hour must not keep them all: 5000 a second at 100 calls); `sip` turns the SIP endpoint
 * on and gives the organization a trunk for callers on 127.0.0.1 (the agent's number is the same); `srtp` adds a TLS
 * port with that certificate and makes the trunk a secure one (`media_encryption: required`, SIP over TLS and SDES-SRTP
 * only) for callers anywhere on 127.0.0.0/24: over TLS each caller is a connection, and the endpoint takes 32 at most
 * from one address, so the bench's callers spread over several loopback addresses.
 */
export async function startBenchGateway(opts: {
  recording: boolean
  frameTiming?: (ms: number) => void
  sip?: boolean
  srtp?: { certPath: string; keyPath: string }
}): Promise<BenchGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-bench-'))
  // The gateway runs in this process: it should have the Node options npm start gives one (`npm run bench` does).
  const missing = missingGatewayNodeOptions()
  if (missing.length > 0)
    process.stderr.write(`note: this process lacks the gateway's Node options ${missing.join(' ')}: use npm run bench\n`)
  // CARRIER_BENCH_WORLD_PROFILE=DIR: a CPU profile of the whole world process, written there when it exits.
  const worldProfile = process.env.CARRIER_BENCH_WORLD_PROFILE
  const world = fork(fileURLToPath(new URL('./carrier-world.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx', ...(worldProfile ? ['--cpu-prof', `--cpu-prof-dir=${worldProfile}`] : [])],
    stdio: 'inherit',
  })
  // In production the carrier and the vendors are other machines: here they share the 2 cores, so the world
  // runs at a lower priority and does not steal the gateway's time slices.
  if (world.pid !== undefined) setPriority(world.pid, 10)
  const urls = await ask(world, 'ready')
  const store = await openStore({ dataDir: dir, databaseUrl: await benchDatabase() })
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    ALLOW_INSECURE_WEBHOOKS: '1',
    PUBLIC_URL,
    STT_VENDOR_A_URL: urls.deepgram,
    STT_VENDOR_A_API_KEY: 'k',
    TTS_VENDOR_A_URL: urls.elevenlabs,
    TTS_VENDOR_A_API_KEY: 'k',
    ...(opts.sip === true ? BENCH_SIP_ENV : {}),
    ...(opts.srtp === undefined ? {} : { SIP_TLS_PORT: '0', SIP_TLS_CERT: opts.srtp.certPath, SIP_TLS_KEY: opts.srtp.keyPath }),
  })
  const boot = await bootstrap(store.db, { vendors: vendorAvailability(config), publicUrl: PUBLIC_URL })
  const gateway = await startGateway({ config, store, log: silentLogger(), carrier: { frameTiming: opts.frameTiming } })
  await store.db.updateTable('organizations').set({ max_concurrent_sessions: null, recording_enabled: opts.recording }).execute()
  // The operator's reservation (PUT /admin/v1/organizations/{id}/phone_numbers/{number}): the agent may claim the number.
  await store.db
    .insertInto('phone_number_reservations')
    .values({ phone_number: CARRIER_NUMBER, organization_id: boot.firstStart!.organizationId })
    .execute()
  const api = apiClient(gateway.url, boot.firstStart!.apiKey)
  await setUpCarrierAgent(api, urls.backend)
  if (opts.sip === true && opts.srtp === undefined)
    await api('POST', '/v1/sip/trunks', { name: 'bench', inbound: { allowed_cidrs: ['127.0.0.1/32'] } })
  if (opts.sip === true && opts.srtp !== undefined)
    await api('POST', '/v1/sip/trunks', { name: 'bench', inbound: { allowed_cidrs: ['127.0.0.0/24'] }, media_encryption: 'required' })
  return {
    world,
    gateway,
    store,
    async close() {
      await gateway.close()
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
