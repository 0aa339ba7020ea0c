/**
 * Shared setup of the campaign tests: a carrier gateway whose dialer ticks fast and reads calling windows by a
 * clock the test sets, a fake Calls API per test, and helpers for the campaign API.
 */
import { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'
import type { CallOutcome } from '../fakes/carrier/fake-call.js'
import { eventually, newTenant, startCarrierGateway, type CarrierGw, type CarrierTenant } from '../carrier-e2e/carrier-setup.js'
import type { TestDb } from '../helpers/db.js'

/** Monday 30 November 2026, 15:00 UTC: 15:00 in London, 10:00 in New York, 00:00 (Tuesday) in Tokyo. */
export const MONDAY_1500_UTC = new Date('2026-11-30T15:00:00Z')

/** A carrier gateway with a settable campaign clock. */
export interface CampaignWorld {
  c: CarrierGw
  clock: { now: Date }
}

/** Starts the gateway (on `db` when given: a second replica). */
export async function startCampaignWorld(db?: TestDb, env: Record<string, string> = {}): Promise<CampaignWorld> {
  const clock = { now: MONDAY_1500_UTC }
  const c = await startCarrierGateway(env, undefined, db, { now: () => clock.now, tickMs: 25 })
  return { c, clock }
}

/** A fake Calls API whose calls to each number follow `script` (in order; the last repeats), else `fallback`. */
export async function startScriptedApi(
  c: CarrierGw,
  script: Record<string, CallOutcome['kind'][]>,
  fallback: CallOutcome = { kind: 'no-answer' },
  stepMs = 5,
): Promise<{ api: FakeCallsApi; dialled: Map<string, number> }> {
  const api = await FakeCallsApi.start({ stepMs, rewriteUrl: c.rewrite })
  const dialled = new Map<string, number>()
  api.outcomeFor = (to) => {
    const n = dialled.get(to) ?? 0
    dialled.set(to, n + 1)
    const kinds = script[to]
    const kind = kinds?.[Math.min(n, kinds.length - 1)]
    if (kind === undefined) return fallback
    return kind === 'answer' ? { kind: 'answer', realtime: false } : ({ kind } as CallOutcome)
  }
  return { api, dialled }
}

/** An organization with carrier credentials on `api`. */
export function campaignTenant(c: CarrierGw, api: FakeCallsApi, opts: Parameters<typeof newTenant>[1] = {}): Promise<CarrierTenant> {
  return newTenant(c, { carrier: { authToken: api.authToken, api }, ...opts })
}

/** The create body with an always-open window, changed by `patch`. */
export function campaignBody(tenant: CarrierTenant, patch: Record<string, unknown> = {}) {
  return {
    name: 'reminders',
    agent_id: tenant.agentId,
    from_phone_number: tenant.number,
    calling_window: { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' },
    default_timezone: 'America/New_York',
    max_concurrency: 5,
    retry: {
      busy: { max_attempts: 1, delay_seconds: 0 },
      no_answer: { max_attempts: 1, delay_seconds: 0 },
      failed: { max_attempts: 1, delay_seconds: 0 },
    },
    ...patch,
  }
}

/** Creates a campaign, adds `contacts`, and starts it; returns its id. */
export async function runCampaign(
  c: CarrierGw,
  tenant: CarrierTenant,
  body: Record<string, unknown>,
  contacts: unknown[],
): Promise<string> {
  const created = await c.gw.request('POST', '/v1/campaigns', { key: tenant.apiKey, body })
  if (created.status !== 201) throw new Error(created.text)
  const id = created.body.id as string
  const added = await c.gw.request('POST', `/v1/campaigns/${id}/contacts`, { key: tenant.apiKey, body: { contacts } })
  if (added.status !== 200) throw new Error(added.text)
  const started = await c.gw.request('POST', `/v1/campaigns/${id}/start`, { key: tenant.apiKey })
  if (started.status !== 200) throw new Error(started.text)
  return id
}

/** Waits for the campaign to reach `status`; returns its contacts (first page of 500) by number. */
export async function waitForStatus(c: CarrierGw, tenant: CarrierTenant, id: string, status: string, timeoutMs = 20_000) {
  await eventually(
    async () => {
      const r = await c.gw.request('GET', `/v1/campaigns/${id}`, { key: tenant.apiKey })
      return r.body.status === status ? true : undefined
    },
    timeoutMs,
    `campaign ${status}`,
  )
  return contactsOf(c, tenant, id)
}

/** The campaign's contacts (first page of 500) by number. */
export async function contactsOf(c: CarrierGw, tenant: CarrierTenant, id: string) {
  const r = await c.gw.request('GET', `/v1/campaigns/${id}/contacts?limit=500`, { key: tenant.apiKey })
  if (r.status !== 200) throw new Error(r.text)
  return new Map<string, any>(r.body.contacts.map((x: { phone_number: string }) => [x.phone_number, x]))
}
