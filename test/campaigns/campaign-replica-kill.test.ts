/**
 * Two replicas dial one campaign from one Postgres server; one is SIGKILLed mid-run (no drain, no goodbye). No
 * number is ever dialled while an earlier call to it is still live, the campaign's concurrency holds across both,
 * and every contact ends with a disposition: the survivor settles the dead replica's calls and puts back in line
 * the contacts it had claimed without dialling. Real processes: the killed replica is a child process.
 */
import t from 'tap'
import { isFinal } from '../fakes/carrier/fake-call.js'
import { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { eventually, PUBLIC_URL, startCarrierGateway } from '../carrier-e2e/carrier-setup.js'
import { campaignBody, campaignTenant, runCampaign, waitForStatus } from './campaign-setup.js'

t.setTimeout(180_000)
const CONTACTS = 60
const skip = process.env.DATABASE_URL === undefined ? 'needs DATABASE_URL: the killed replica is another process' : false

t.test(`two replicas, one SIGKILLed mid-campaign: no double dial, every one of ${CONTACTS} contacts ends`, { skip }, async (t) => {
  const env = { LEASE_TTL_MS: '3000', OUTBOUND_QUEUE_MAX_WAIT_MS: '2000' }
  const survivor = await startCarrierGateway(env, undefined, undefined, { tickMs: 400 })
  t.teardown(() => survivor.gw.close())
  const doomed = await spawnGateway({
    ...env,
    DATABASE_URL: survivor.gw.db.options.databaseUrl as string,
    PUBLIC_URL,
    ADMIN_TOKEN: '',
    ALLOW_INSECURE_WEBHOOKS: '1',
  })
  t.teardown(() => doomed.kill())

  // Each call rings for a while, then is not answered; its status callbacks reach the survivor.
  const api = await FakeCallsApi.start({ stepMs: 150, rewriteUrl: survivor.rewrite, outcome: { kind: 'no-answer' } })
  t.teardown(() => api.close())
  const overlaps: string[] = []
  api.outcomeFor = (to) => {
    // The call being created is already in the map: another live one to the same number is a double dial.
    const live = [...api.calls.values()].filter((call) => call.params.to === to && !isFinal(call.status))
    if (live.length > 1) overlaps.push(to)
    return undefined
  }
  const tenant = await campaignTenant(survivor, api)
  const paced = await survivor.gw.request('PATCH', `/admin/v1/organizations/${tenant.orgId}`, {
    admin: true,
    body: { outbound_calls_per_second: 20 },
  })
  t.equal(paced.status, 200, paced.text)
  const numbers = Array.from({ length: CONTACTS }, (_, i) => `+1415555${String(400 + i).padStart(4, '0')}`)
  const id = await runCampaign(
    survivor,
    tenant,
    campaignBody(tenant, {
      max_concurrency: 6,
      retry: { no_answer: { max_attempts: 1, delay_seconds: 0 }, failed: { max_attempts: 3, delay_seconds: 0 } },
    }),
    numbers.map((phone_number) => ({ phone_number })),
  )
  const db = survivor.gw.store.db
  let most = 0
  const watch = setInterval(async () => {
    const live = await db
      .selectFrom('sessions')
      .innerJoin('campaign_contacts', 'campaign_contacts.id', 'sessions.campaign_contact_id')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('campaign_contacts.campaign_id', '=', id)
      .where('sessions.status', '!=', 'ended')
      .executeTakeFirstOrThrow()
      .catch(() => ({ n: '0' }))
    most = Math.max(most, Number(live.n))
  }, 20)
  t.teardown(() => clearInterval(watch))

  // Kill the child once it has calls of its own in flight.
  await eventually(
    async () => {
      const r = await db
        .selectFrom('sessions')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('lease_owner', '=', doomed.leaseOwner)
        .where('call_sid', 'is not', null)
        .where('status', '!=', 'ended')
        .executeTakeFirstOrThrow()
      return Number(r.n) >= 2 ? true : undefined
    },
    30_000,
    'the doomed replica dialling',
  )
  await doomed.kill('SIGKILL')
  const killedAt = api.calls.size
  t.ok(killedAt < CONTACTS, `killed mid-run (${killedAt} calls placed)`)
  const byDoomed = await db.selectFrom('sessions').select('id').where('lease_owner', '=', doomed.leaseOwner).execute()

  const contacts = await waitForStatus(survivor, tenant, id, 'completed', 90_000)
  clearInterval(watch)
  t.equal(contacts.size, CONTACTS)
  t.ok(
    [...contacts.values()].every((x) => x.status === 'done' && typeof x.disposition === 'string'),
    'every contact ended with a disposition',
  )
  t.same(overlaps, [], 'no number was dialled while an earlier call to it was live')
  const dialledNumbers = new Set([...api.calls.values()].map((call) => call.params.to))
  t.equal(dialledNumbers.size, CONTACTS, 'every contact was dialled')
  const attempts = await db.selectFrom('campaign_attempts').select(['session_id', 'outcome']).where('campaign_id', '=', id).execute()
  const sessions = await db
    .selectFrom('sessions')
    .innerJoin('campaign_contacts', 'campaign_contacts.id', 'sessions.campaign_contact_id')
    .select('sessions.id')
    .where('campaign_contacts.campaign_id', '=', id)
    .execute()
  t.equal(attempts.length, sessions.length, 'every session placed is one recorded attempt')
  t.ok(byDoomed.length >= 2, `the killed replica had placed calls (${byDoomed.length} sessions)`)
  t.ok(most <= 6, `at most 6 calls at once across both replicas (saw ${most})`)
  const outcomes: Record<string, number> = {}
  for (const a of attempts) outcomes[a.outcome] = (outcomes[a.outcome] ?? 0) + 1
  t.comment(`calls placed: ${api.calls.size}; attempt outcomes: ${JSON.stringify(outcomes)}; most at once: ${most}`)
})
