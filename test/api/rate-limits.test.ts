import t, { type Test } from 'tap'
import { startTestGateway, type TestResponse } from '../helpers/gateway.js'
import { DEFAULT_CAPS, DEFAULT_RATES } from '../../gateway/store/organization-limits.js'

// Request rates per organization. The gateways' clock stands still unless a test moves it, so a bucket refills
// only when told to and nothing here depends on how fast the machine is; limits are set low through the admin API.
let now = Date.parse('2030-01-01T00:00:00Z')
const clock = () => now
const gw = await startTestGateway({}, { deps: { clock } })
t.teardown(() => gw.close())

/** A fresh organization (its own buckets) with `limits` set at creation, its API key and an agent. */
async function newOrg(limits: Record<string, unknown>) {
  const r = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: `rates ${Math.random()}`, limits } })
  if (r.status !== 201) throw new Error(`create organization: ${r.status} ${r.text}`)
  const key: string = r.body.api_key
  const agent = await gw.request('POST', '/v1/agents', { key, body: {} })
  if (agent.status !== 201) throw new Error(`create agent: ${agent.status} ${agent.text}`)
  return { id: r.body.id as string, key, agentId: agent.body.id as string, created: r.body }
}

function refused(t: Test, r: TestResponse, retryAfter: string) {
  t.equal(r.status, 429, '429 past the burst')
  t.equal(r.body?.code, 'rate_limited', 'stable code')
  t.type(r.body?.error, 'string', 'the SPEC error body')
  t.equal(r.headers.get('retry-after'), retryAfter, `Retry-After ${retryAfter}`)
}

const authorize = (key: string, agentId: string) =>
  gw.request('POST', '/v1/agents/web/authorize_session', { key, body: { agent_id: agentId } })

t.test('the admin API shows every limit filled in, and PATCH merges, null back to the default', async (t) => {
  const org = await newOrg({ authorize_session: { per_second: 3 } })
  t.same(org.created.limits.authorize_session, { per_second: 3, burst: DEFAULT_RATES.authorize_session.burst }, 'create keeps the rest')
  t.equal(org.created.limits.max_agents, DEFAULT_CAPS.max_agents)
  const patched = await gw.request('PATCH', `/admin/v1/organizations/${org.id}`, {
    admin: true,
    body: { limits: { authorize_session: { burst: 7 }, max_agents: 5 } },
  })
  t.equal(patched.status, 200)
  t.same(patched.body.limits.authorize_session, { per_second: 3, burst: 7 }, 'a PATCH of one field keeps the other')
  t.equal(patched.body.limits.max_agents, 5)
  const reset = await gw.request('PATCH', `/admin/v1/organizations/${org.id}`, {
    admin: true,
    body: { limits: { authorize_session: null, max_agents: null } },
  })
  t.same(reset.body.limits.authorize_session, DEFAULT_RATES.authorize_session, 'null: the default rate')
  t.equal(reset.body.limits.max_agents, DEFAULT_CAPS.max_agents, 'null: the default cap')
  const read = await gw.request('GET', `/admin/v1/organizations/${org.id}`, { admin: true })
  t.same(read.body.limits, reset.body.limits, 'GET shows the same')
  for (const bad of [{ authorize_session: { burst: 0 } }, { authorize_session: { per_second: -1 } }, { max_agents: 1.5 }, { nope: 1 }]) {
    const r = await gw.request('PATCH', `/admin/v1/organizations/${org.id}`, { admin: true, body: { limits: bad } })
    t.equal(r.status, 400, `refused: ${JSON.stringify(bad)}`)
    t.equal(r.body.code, 'validation_failed')
  }
})

t.test('authorize_session: 429 with Retry-After after the burst, passes again once refilled', async (t) => {
  const org = await newOrg({ authorize_session: { per_second: 0.4, burst: 2 } })
  t.equal((await authorize(org.key, org.agentId)).status, 200)
  t.equal((await authorize(org.key, org.agentId)).status, 200)
  // One token at 0.4 a second is 2.5 s away: rounded up to whole seconds.
  refused(t, await authorize(org.key, org.agentId), '3')
  now += 2_500
  t.equal((await authorize(org.key, org.agentId)).status, 200, 'a token is back 2.5 s later')
  refused(t, await authorize(org.key, org.agentId), '3')
  const other = await newOrg({})
  t.equal((await authorize(other.key, other.agentId)).status, 200, 'another organization is not held up')
})

t.test('two gateways on one database draw from the same bucket', async (t) => {
  const second = await startTestGateway({}, { db: gw.db, deps: { clock } })
  t.teardown(() => second.close())
  const org = await newOrg({ authorize_session: { per_second: 1, burst: 2 } })
  t.equal((await authorize(org.key, org.agentId)).status, 200, 'first on gateway 1')
  const viaSecond = await second.request('POST', '/v1/agents/web/authorize_session', { key: org.key, body: { agent_id: org.agentId } })
  t.equal(viaSecond.status, 200, 'second on gateway 2')
  refused(t, await authorize(org.key, org.agentId), '1')
  const third = await second.request('POST', '/v1/agents/web/authorize_session', { key: org.key, body: { agent_id: org.agentId } })
  refused(t, third, '1')
})

t.test("agent link sessions: limited per link's organization", async (t) => {
  const org = await newOrg({ agent_link_session: { per_second: 1, burst: 2 } })
  const link = await gw.request('POST', `/v1/agents/${org.agentId}/links`, { key: org.key, body: {} })
  t.equal(link.status, 201)
  const token = (link.body.url as string).split('#link=')[1] as string
  const viaLink = () => gw.request('POST', '/v1/agent_links/authorize_session', { key: token, body: {} })
  t.equal((await viaLink()).status, 200)
  t.equal((await viaLink()).status, 200)
  refused(t, await viaLink(), '1')
  t.equal((await authorize(org.key, org.agentId)).status, 200, "the API key's authorize_session has its own bucket")
})

t.test('creating agents, links, phone numbers and SIP trunks: each limited', async (t) => {
  const one = { per_second: 1, burst: 1 }
  const org = await newOrg({
    create_agent: { per_second: 1, burst: 2 },
    create_agent_link: one,
    assign_phone_number: one,
    create_sip_trunk: one,
  })
  // newOrg created an agent: the bucket of 2 has one left.
  t.equal((await gw.request('POST', '/v1/agents', { key: org.key, body: {} })).status, 201)
  refused(t, await gw.request('POST', '/v1/agents', { key: org.key, body: {} }), '1')

  const link = () => gw.request('POST', `/v1/agents/${org.agentId}/links`, { key: org.key, body: {} })
  t.equal((await link()).status, 201)
  refused(t, await link(), '1')

  await gw.request('PUT', `/admin/v1/organizations/${org.id}/phone_numbers/${encodeURIComponent('+14155550101')}`, { admin: true })
  const number = (n: string) => gw.request('POST', `/v1/agents/${org.agentId}/phone_numbers`, { key: org.key, body: { phone_number: n } })
  t.equal((await number('+14155550101')).status, 201)
  refused(t, await number('+14155550102'), '1')

  const trunk = (name: string) =>
    gw.request('POST', '/v1/sip/trunks', { key: org.key, body: { name, inbound: { allowed_cidrs: ['192.0.2.0/24'] } } })
  t.equal((await trunk('a')).status, 201)
  refused(t, await trunk('b'), '1')

  now += 1_000
  t.equal((await gw.request('POST', '/v1/agents', { key: org.key, body: {} })).status, 201, 'refilled a second later')
})

t.test('approving a device sign-in (which mints an API key) is limited per organization', async (t) => {
  const org = await newOrg({ issue_api_key: { per_second: 0.1, burst: 1 } })
  const approve = async () => {
    const started = await gw.request('POST', '/v1/cli/device_authorizations', { key: null, body: {} })
    return gw.request('POST', '/v1/cli/device_authorizations/approve', { key: org.key, body: { user_code: started.body.user_code } })
  }
  t.equal((await approve()).status, 200)
  refused(t, await approve(), '10')
})
