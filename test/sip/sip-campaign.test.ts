/**
 * A campaign whose caller id is a SIP trunk's number: its calls go out through the trunk as initiate_outbound's
 * do, and the trunk's answers (486 busy, 480 after ringing) become the campaign's outcomes and retries.
 */
import t from 'tap'
import { getHeader } from '../../transports/sip/message/sip-message.js'
import { eventually, newTenant } from '../carrier-e2e/carrier-setup.js'
import { FakeSipTrunk } from '../fakes/sip-trunk/fake-sip-trunk.js'
import { campaignBody, waitForStatus } from '../campaigns/campaign-setup.js'
import { startSipWorld } from './sip-setup.js'

const { c } = await startSipWorld(t, {}, { ringTimeoutSec: 1 })
const trunk = await FakeSipTrunk.start({ username: 'voxgate', password: 'trunk-secret' })
t.teardown(() => trunk.close())

t.test('a campaign dials through the trunk; busy is retried per its policy, 480 ends no_answer', async (t) => {
  const tenant = await newTenant(c)
  const pace = await c.gw.request('PATCH', `/admin/v1/organizations/${tenant.orgId}`, {
    admin: true,
    body: { outbound_calls_per_second: 50 },
  })
  t.equal(pace.status, 200)
  const made = await c.gw.request('POST', '/v1/sip/trunks', {
    key: tenant.apiKey,
    body: { name: 'out', outbound: { uri: trunk.uri, username: 'voxgate', password: 'trunk-secret', from_number: tenant.number } },
  })
  t.equal(made.status, 201, made.text)
  trunk.mode = 'busy'
  const body = campaignBody(tenant, {
    max_concurrency: 1,
    retry: { busy: { max_attempts: 2, delay_seconds: 0 }, no_answer: { max_attempts: 1, delay_seconds: 0 } },
  })
  const created = await c.gw.request('POST', '/v1/campaigns', { key: tenant.apiKey, body })
  t.equal(created.status, 201, created.text)
  const id = created.body.id
  const BUSY = '+14155550801'
  await c.gw.request('POST', `/v1/campaigns/${id}/contacts`, { key: tenant.apiKey, body: { contacts: [{ phone_number: BUSY }] } })
  await c.gw.request('POST', `/v1/campaigns/${id}/start`, { key: tenant.apiKey })
  const busy = await waitForStatus(c, tenant, id, 'completed')
  t.match(busy.get(BUSY), { disposition: 'busy', attempts: 2 })
  const callIds = (to: string) =>
    new Set(trunk.log.filter((r) => r.method === 'INVITE' && r.uri.startsWith(`sip:${to}@`)).map((r) => getHeader(r, 'Call-ID')))
  t.equal(callIds(BUSY).size, 2, 'two calls reached the trunk')
  const sessions = await c.gw.store.db
    .selectFrom('sessions')
    .select(['channel', 'call_status'])
    .where('campaign_contact_id', '=', busy.get(BUSY).id)
    .execute()
  t.same(
    sessions.map((s) => [s.channel, s.call_status]),
    [
      ['sip', 'busy'],
      ['sip', 'busy'],
    ],
  )

  trunk.mode = 'unavailable'
  const AWAY = '+14155550802'
  const again = await c.gw.request('POST', '/v1/campaigns', { key: tenant.apiKey, body: { ...body, name: 'away' } })
  await c.gw.request('POST', `/v1/campaigns/${again.body.id}/contacts`, {
    key: tenant.apiKey,
    body: { contacts: [{ phone_number: AWAY }] },
  })
  await c.gw.request('POST', `/v1/campaigns/${again.body.id}/start`, { key: tenant.apiKey })
  const away = await waitForStatus(c, tenant, again.body.id, 'completed')
  t.match(away.get(AWAY), { disposition: 'no_answer', attempts: 1 })
  await eventually(async () => (callIds(AWAY).size === 1 ? true : undefined), 1_000)
})
