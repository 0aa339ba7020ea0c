import t from 'tap'
import { sql } from 'kysely'
import { testDb } from '../helpers/db.js'
import { createOrganization } from '../../gateway/store/organizations.js'
import { createAgent } from '../../gateway/store/agents.js'
import { createConversation } from '../../gateway/store/sessions.js'
import { createCampaign, moveCampaign } from '../../gateway/store/campaigns.js'
import { addContacts, claimContacts, reclaimAbandoned, releaseContact, renewClaims } from '../../gateway/store/campaign-contacts.js'

// The dialers' claims on the store, on PGlite and (in the database suite) on the Postgres server, where the
// concurrent claims below really run on separate connections at once.
const db = await testDb()
t.teardown(() => db.cleanup())
const store = db.store.db
const org = (await createOrganization(store, { name: 'claims' })).organization.id
const NOW = new Date('2026-11-30T15:00:00Z')
const retry = {
  busy: { max_attempts: 1, delay_seconds: 0 },
  no_answer: { max_attempts: 1, delay_seconds: 0 },
  failed: { max_attempts: 1, delay_seconds: 0 },
  machine: { max_attempts: 1, delay_seconds: 0 },
}

async function campaignWith(n: number, maxConcurrency: number, window = { days: [1, 2, 3, 4, 5, 6, 7], start: 0, end: 1440 }) {
  const c = await createCampaign(store, {
    organizationId: org,
    agentId: 'agt_x',
    name: 'c',
    fromPhoneNumber: '+14155550100',
    windowDays: window.days,
    windowStartMinute: window.start,
    windowEndMinute: window.end,
    defaultTimezone: 'America/New_York',
    retry,
    maxConcurrency,
    machineDetection: false,
    lifecycleWebhooks: false,
  })
  const contacts = Array.from({ length: n }, (_, i) => ({
    row: i + 1,
    phoneNumber: `+1415555${String(1000 + i)}`,
    timezone: i % 2 === 0 ? 'Europe/London' : 'Asia/Tokyo',
    customMetadata: undefined,
  }))
  await addContacts(store, { id: c.id, organizationId: org }, contacts)
  await moveCampaign(store, org, c.id, ['draft'], 'running')
  return c.id
}

t.test('concurrent claimers never take one contact twice nor pass the campaign concurrency', async (t) => {
  const id = await campaignWith(40, 6)
  const claim = (owner: string) => claimContacts(store, { campaignId: id, owner, claimTtlMs: 60_000, now: NOW, limit: 10 })
  const rounds = await Promise.all(['a', 'b', 'c', 'd', 'e'].map(claim))
  const ids = rounds.flat().map((c) => c.id)
  t.equal(new Set(ids).size, ids.length, 'no contact claimed twice')
  t.ok(ids.length <= 6, `within the concurrency (${ids.length})`)
  t.ok(ids.length >= 1)
  // Only London is inside the window at 15:00 UTC (Tokyo: midnight) for a 09:00-17:00 window: a new campaign.
  const windowed = await campaignWith(10, 10, { days: [1], start: 9 * 60, end: 17 * 60 })
  const got = await claimContacts(store, { campaignId: windowed, owner: 'a', claimTtlMs: 60_000, now: NOW, limit: 10 })
  t.same([...new Set(got.map((c) => c.timezone))], ['Europe/London'], 'the window is tested in SQL in each zone')
  t.equal(got.length, 5)
  const paused = await campaignWith(3, 3)
  await moveCampaign(store, org, paused, ['running'], 'paused')
  t.same(
    await claimContacts(store, { campaignId: paused, owner: 'a', claimTtlMs: 60_000, now: NOW, limit: 10 }),
    [],
    'a paused campaign is not claimed',
  )
})

t.test('an expired claim without a session goes back in line; one with a session not yet settled does not', async (t) => {
  const id = await campaignWith(2, 2)
  const [first, second] = await claimContacts(store, { campaignId: id, owner: 'ghost', claimTtlMs: 1, now: NOW, limit: 2 })
  if (first === undefined || second === undefined) throw new Error('nothing claimed')
  // The second has a session (still live) naming it, as placeOutboundCall writes with the session.
  const agent = await createAgent(store, {
    organizationId: org,
    name: 'a',
    config: { clients: { browser: true }, plugins: [] },
    templateId: null,
  })
  const conversation = await createConversation(store, org, agent.id)
  await sql`insert into sessions (id, conversation_id, agent_id, organization_id, status, channel, campaign_contact_id, updated_at)
    values ('sess_claims_1', ${conversation}, ${agent.id}, ${org}, 'authorized', 'carrier', ${second.id}, now())`.execute(store)
  await new Promise((r) => setTimeout(r, 20))
  await renewClaims(store, 'ghost', 60_000)
  const states = async () =>
    Object.fromEntries(
      (await store.selectFrom('campaign_contacts').select(['id', 'status']).where('campaign_id', '=', id).execute()).map((r) => [
        r.id,
        r.status,
      ]),
    )
  t.same(await states(), { [first.id]: 'dialing', [second.id]: 'dialing' }, 'an expired claim is not renewed, nor yet taken back')
  t.ok((await reclaimAbandoned(store)) >= 1)
  t.same(await states(), { [first.id]: 'pending', [second.id]: 'dialing' }, 'never dialled again while its session may be live')
  await releaseContact(store, second.id, 0)
  t.equal((await states())[second.id], 'dialing', 'nor released while its session is not settled')
})
