import t from 'tap'
import { testDb } from '../helpers/db.js'
import { bootstrap } from '../../server/bootstrap.js'
import { createOrganization } from '../../gateway/store/organizations.js'
import { createApiKey, organizationForApiKey } from '../../gateway/store/api-keys.js'
import { createAgent, getAgent } from '../../gateway/store/agents.js'
import { assignPhoneNumber } from '../../gateway/store/phone-numbers.js'
import { sql } from 'kysely'
import { agentLinkGrant } from '../../gateway/store/agent-links.js'

const db = await testDb()
t.teardown(() => db.cleanup())

const bootOptions = { vendors: { stt: { vendor_a: false, vendor_b: false }, tts: { vendor_a: false } }, publicUrl: 'http://gw.example' }

t.test('first start creates one default organization, its key, a demo agent and a link; second start creates none', async (t) => {
  const first = (await bootstrap(db.store.db, bootOptions)).firstStart
  if (first === undefined) throw new Error('first start made nothing')
  t.match(first.apiKey, /^vgk_/)
  t.equal(await organizationForApiKey(db.store.db, first.apiKey), first.organizationId)
  const agent = await getAgent(db.store.db, first.organizationId, first.agentId)
  if (agent === undefined) throw new Error('no demo agent')
  t.equal(agent.name, 'Demo agent')
  t.equal(agent.agent_template_id, 'voice-agent-default')
  const uses = (agent.config as { plugins: { use: string }[] }).plugins.map((p) => p.use)
  t.ok(uses.includes('tts.local'), 'speaks with the local TTS, which needs no key')
  t.match(first.linkUrl, /^http:\/\/gw\.example\/#link=vxl_[A-Za-z0-9_-]{40,}$/, 'token in the fragment of the demo page')
  const token = first.linkUrl.slice(first.linkUrl.indexOf('=') + 1)
  t.same(await agentLinkGrant(db.store.db, token), { linkId: first.linkId, organizationId: first.organizationId, agentId: first.agentId })
  t.equal(await agentLinkGrant(db.store.db, first.apiKey), undefined, 'an API key is not a link token')
  const second = await bootstrap(db.store.db, bootOptions)
  t.equal(second.firstStart, undefined)
  const templates = await db.store.db.selectFrom('agent_templates').selectAll().execute()
  t.ok(templates.length >= 2, 'templates seeded')
  t.equal(templates.filter((x) => x.is_default).length, 1, 'exactly one default template')
})

t.test('API keys are stored hashed: the plain key is nowhere in the database', async (t) => {
  const { organization, apiKey } = await createOrganization(db.store.db, { name: 'hash-check' })
  const extra = await createApiKey(db.store.db, organization.id)
  // Search every text column of every table for the plain keys.
  const dump = await sql<{ t: string }>`
    select string_agg(row_to_json(x)::text, '') as t from (
      select * from api_keys
    ) x`.execute(db.store.db)
  const all = await sql<{ t: string }>`
    select concat_ws('|',
      (select string_agg(row_to_json(o)::text, '') from organizations o),
      (select string_agg(row_to_json(a)::text, '') from agents a),
      (select string_agg(row_to_json(k)::text, '') from api_keys k)) as t`.execute(db.store.db)
  for (const key of [apiKey, extra]) {
    t.notOk(dump.rows[0]!.t.includes(key))
    t.notOk(all.rows[0]!.t.includes(key))
    t.notOk(all.rows[0]!.t.includes(key.slice(4)), 'not even the random part')
  }
  t.equal(await organizationForApiKey(db.store.db, apiKey), organization.id)
  t.equal(await organizationForApiKey(db.store.db, extra), organization.id)
  await db.store.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('organization_id', '=', organization.id).execute()
  t.equal(await organizationForApiKey(db.store.db, apiKey), undefined, 'revoked keys stop working')
})

t.test('data persists across a restart on the same database', async (t) => {
  const { organization, apiKey } = await createOrganization(db.store.db, { name: 'persist', balance: 7.25 })
  const agent = await createAgent(db.store.db, {
    organizationId: organization.id,
    name: 'Persistent',
    config: { clients: { browser: true }, plugins: [] },
    templateId: null,
  })
  const phone = await assignPhoneNumber(db.store.db, {
    agentId: agent.id,
    organizationId: organization.id,
    phoneNumber: '+442071838750',
    carrierSid: null,
    friendlyName: 'London',
    carrierOwned: true,
  })
  t.ok(phone.ok)
  await db.store.close()
  db.store = await db.reopen()
  const again = await getAgent(db.store.db, organization.id, agent.id)
  t.equal(again?.name, 'Persistent')
  t.same(again?.config, { clients: { browser: true }, plugins: [] })
  t.equal(again?.assigned_phone_numbers[0]?.phone_number, '+442071838750')
  t.equal(await organizationForApiKey(db.store.db, apiKey), organization.id)
  const org = await db.store.db.selectFrom('organizations').select('balance').where('id', '=', organization.id).executeTakeFirstOrThrow()
  t.equal(Number(org.balance), 7.25)
  t.equal((await bootstrap(db.store.db, bootOptions)).firstStart, undefined, 'no second default org after restart')
})
