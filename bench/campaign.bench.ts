/**
 * An outbound campaign of CAMPAIGN_BENCH_CONTACTS (default 10,000) contacts against the fake carrier's Calls API
 * in a process of its own, with a mix of outcomes by the callee's last digit (busy, then one retry; no answer;
 * failed). Reported: the dial rate against the organization's pacing (the dial gate's smallest gap, by the
 * database's clock, against 1000/rate ms; the carrier's arrivals add HTTP and event loop jitter),
 * the most calls live at once against the campaign's concurrency, numbers dialled while an earlier call to them was
 * live (must be 0), contacts left without a disposition (must be 0), and the gateway's CPU per dial. With
 * DATABASE_URL, a second gateway process dials the same campaign and is SIGKILLed halfway through.
 * Env: CAMPAIGN_BENCH_CONTACTS, CAMPAIGN_BENCH_RATE (dials per second, default 20), CAMPAIGN_BENCH_CONCURRENCY
 * (default 10).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { silentLogger } from '../core/log.js'
import { openStore } from '../gateway/store/database.js'
import { startGateway } from '../server/app.js'
import { bootstrap } from '../server/bootstrap.js'
import { loadConfig, vendorAvailability } from '../server/config.js'
import { startCallsApiProcess } from '../test/fakes/carrier/calls-api-child.js'
import { spawnGateway, type ChildGateway } from '../test/helpers/spawn-gateway.js'
import { apiClient, benchDatabase } from './carrier-bench-setup.js'
import { cpuMs, fmt, type BenchRow } from './bench-util.js'

const CONTACTS = Number(process.env.CAMPAIGN_BENCH_CONTACTS ?? 10_000)
const RATE = Number(process.env.CAMPAIGN_BENCH_RATE ?? 20)
/**
 * The campaign's max_concurrency. 60 by default, above what 20 dials a second of calls a few seconds long keep live,
 * so the rate is what binds and the pacing is measured; a small value (10) measures that the limit holds instead.
 */
const CONCURRENCY = Number(process.env.CAMPAIGN_BENCH_CONCURRENCY ?? 60)
const ADMIN = 'campaign-bench-admin'
const FROM = '+14155552671'

export async function bench(): Promise<BenchRow[]> {
  const databaseUrl = await benchDatabase()
  const dataDir = databaseUrl === undefined ? mkdtempSync(join(tmpdir(), 'voxgate-campaign-bench-')) : undefined
  const port = await freePort()
  const publicUrl = `http://127.0.0.1:${port}`
  const env = {
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: publicUrl,
    ADMIN_TOKEN: ADMIN,
    ALLOW_INSECURE_WEBHOOKS: '1',
    LOG_LEVEL: 'silent',
    LEASE_TTL_MS: '3000',
    OUTBOUND_QUEUE_MAX_WAIT_MS: '3000',
    ...(databaseUrl !== undefined && { DATABASE_URL: databaseUrl }),
    ...(dataDir !== undefined && { DATA_DIR: dataDir }),
  }
  const config = loadConfig(env)
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    pgliteSharedBuffersMb: config.pgliteSharedBuffersMb,
  })
  const boot = await bootstrap(store.db, { vendors: vendorAvailability(config), publicUrl })
  const gateway = await startGateway({ config, store, log: silentLogger() })
  const carrier = await startCallsApiProcess({ FAKE_AUTH_TOKEN: 'campaign-bench-token', FAKE_OUTCOME: 'mix', FAKE_STEP_MS: '100' })
  let second: ChildGateway | undefined
  try {
    const orgId = boot.firstStart?.organizationId as string
    const api = apiClient(gateway.url, boot.firstStart?.apiKey as string)
    const admin = apiClient(gateway.url, ADMIN)
    await admin('PUT', `/admin/v1/organizations/${orgId}/carrier`, {
      account_sid: carrier.accountSid,
      auth_token: 'campaign-bench-token',
      api_base_url: carrier.baseUrl,
    })
    await admin('PATCH', `/admin/v1/organizations/${orgId}`, { outbound_calls_per_second: RATE, max_concurrent_sessions: CONCURRENCY * 2 })
    await admin('PUT', `/admin/v1/organizations/${orgId}/phone_numbers/${encodeURIComponent(FROM)}`)
    const agent = await api('POST', '/v1/agents', {})
    await api('POST', `/v1/agents/${agent.id}/phone_numbers`, { phone_number: FROM })
    const campaign = await api('POST', '/v1/campaigns', {
      name: 'bench',
      agent_id: agent.id,
      from_phone_number: FROM,
      calling_window: { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' },
      default_timezone: 'America/New_York',
      max_concurrency: CONCURRENCY,
      retry: {
        busy: { max_attempts: 2, delay_seconds: 0 },
        no_answer: { max_attempts: 1, delay_seconds: 0 },
        failed: { max_attempts: 1, delay_seconds: 0 },
      },
    })
    const numbers = Array.from({ length: CONTACTS }, (_, i) => `+1212${String(2_000_000 + i).padStart(7, '0')}`)
    for (let i = 0; i < numbers.length; i += 20_000) {
      const batch = await api('POST', `/v1/campaigns/${campaign.id}/contacts`, {
        contacts: numbers.slice(i, i + 20_000).map((phone_number) => ({ phone_number })),
      })
      if (batch.rejected > 0) throw new Error(`contacts refused: ${JSON.stringify(batch.errors.slice(0, 3))}`)
    }
    if (databaseUrl !== undefined) second = await spawnGateway({ ...env, PORT: '0', LOG_LEVEL: 'silent' })
    const cpu0 = cpuMs()
    const t0 = performance.now()
    await api('POST', `/v1/campaigns/${campaign.id}/start`)
    let killed = false
    for (;;) {
      await new Promise((r) => setTimeout(r, 500))
      const p = await api('GET', `/v1/campaigns/${campaign.id}/progress`)
      if (second !== undefined && !killed && p.dialled >= CONTACTS / 2) {
        await second.kill('SIGKILL')
        killed = true
      }
      if (p.status === 'completed') break
    }
    const seconds = (performance.now() - t0) / 1000
    const cpu = cpuMs() - cpu0
    const calls = (await (await fetch(`${carrier.controlUrl}/__calls`)).json()) as {
      arrivals: number[]
      mostLive: number
      doubles: string[]
      calls: number
    }
    const progress = await api('GET', `/v1/campaigns/${campaign.id}/progress`)
    const own = await store.db
      .selectFrom('sessions')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('lease_owner', '=', gateway.sessions.keeper.owner)
      .executeTakeFirstOrThrow()
    // The dial gate's own times (the database's clock), free of the HTTP jitter the carrier's arrivals carry.
    const dialled = await store.db
      .selectFrom('sessions')
      .select('dialed_at')
      .where('organization_id', '=', orgId)
      .where('dialed_at', 'is not', null)
      .orderBy('dialed_at')
      .execute()
    const gateTimes = dialled.map((r) => (r.dialed_at as Date).getTime())
    const gateGaps = gateTimes
      .slice(1)
      .map((a, i) => a - (gateTimes[i] as number))
      .sort((a, b) => a - b)
    const arrivals = calls.arrivals
    const gaps = arrivals
      .slice(1)
      .map((a, i) => a - (arrivals[i] as number))
      .sort((a, b) => a - b)
    const achieved = (arrivals.length - 1) / (((arrivals.at(-1) as number) - (arrivals[0] as number)) / 1000)
    return [
      {
        contacts: CONTACTS,
        replicas: second === undefined ? '1 (no DATABASE_URL)' : '2, one SIGKILLed halfway',
        dials: calls.calls,
        'target /s': RATE,
        'achieved /s': fmt(achieved),
        'pace error %': fmt(((achieved - RATE) / RATE) * 100),
        'gate min gap ms': fmt(gateGaps[0] ?? 0),
        'carrier p1 gap ms': fmt(gaps[Math.floor(gaps.length * 0.01)] ?? 0),
        'concurrency limit': CONCURRENCY,
        'most live': calls.mostLive,
        'double dials': calls.doubles.length,
        'no disposition': progress.remaining,
        's total': fmt(seconds),
        'CPU ms / dial': fmt(cpu / Math.max(1, Number(own.n))),
      },
    ]
  } finally {
    await second?.kill('SIGKILL')
    carrier.kill()
    await gateway.close()
    await store.close()
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
  }
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise((resolve) => server.close(resolve))
  return port
}
