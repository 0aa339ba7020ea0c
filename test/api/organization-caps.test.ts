import t, { type Test } from 'tap'
import { startTestGateway, type TestResponse } from '../helpers/gateway.js'

// Caps on what an organization keeps: create up to the cap, one more is refused with a code and a message naming
// the cap and how to raise it, the operator raises it, the next passes. Caps are set low through the admin API.
const gw = await startTestGateway()
t.teardown(() => gw.close())

async function newOrg(limits: Record<string, unknown>) {
  const r = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: `caps ${Math.random()}`, limits } })
  if (r.status !== 201) throw new Error(`create organization: ${r.status} ${r.text}`)
  return { id: r.body.id as string, key: r.body.api_key as string }
}
const raise = (orgId: string, limits: Record<string, unknown>) =>
  gw.request('PATCH', `/admin/v1/organizations/${orgId}`, { admin: true, body: { limits } })

function capped(t: Test, r: TestResponse, code: string, cap: string, max: number) {
  t.equal(r.status, 409, 'one more is refused with 409')
  t.equal(r.body?.code, code, `stable code ${code}`)
  t.match(
    r.body?.error,
    new RegExp(`limit of ${max} .*limits\\.${cap}.*PATCH /admin/v1/organizations`),
    'names the cap and how to raise it',
  )
}

t.test('agents', async (t) => {
  const org = await newOrg({ max_agents: 2 })
  const create = () => gw.request('POST', '/v1/agents', { key: org.key, body: {} })
  t.equal((await create()).status, 201)
  t.equal((await create()).status, 201)
  capped(t, await create(), 'limit_reached', 'max_agents', 2)
  t.equal((await raise(org.id, { max_agents: 3 })).status, 200)
  t.equal((await create()).status, 201, 'passes once raised')
  capped(t, await create(), 'limit_reached', 'max_agents', 3)
})

t.test('phone numbers, counted over all agents; assigning a held number again is not one more', async (t) => {
  const org = await newOrg({ max_phone_numbers: 2 })
  const agents = [] as string[]
  for (let i = 0; i < 2; i++) agents.push((await gw.request('POST', '/v1/agents', { key: org.key, body: {} })).body.id)
  // The operator reserves the numbers first: only then may the organization claim them.
  for (const n of ['+14155550201', '+14155550202', '+14155550203']) {
    t.equal(
      (await gw.request('PUT', `/admin/v1/organizations/${org.id}/phone_numbers/${encodeURIComponent(n)}`, { admin: true })).status,
      201,
    )
  }
  const assign = (agent: string, n: string, name?: string) =>
    gw.request('POST', `/v1/agents/${agent}/phone_numbers`, { key: org.key, body: { phone_number: n, friendly_name: name } })
  t.equal((await assign(agents[0] as string, '+14155550201')).status, 201)
  t.equal((await assign(agents[1] as string, '+14155550202')).status, 201)
  capped(t, await assign(agents[0] as string, '+14155550203'), 'limit_reached', 'max_phone_numbers', 2)
  const relabel = await assign(agents[0] as string, '+14155550201', 'front desk')
  t.equal(relabel.status, 201, 'the agent relabels a number it holds at the cap')
  t.equal(relabel.body.friendly_name, 'front desk')
  await raise(org.id, { max_phone_numbers: 3 })
  t.equal((await assign(agents[0] as string, '+14155550203')).status, 201, 'passes once raised')
})

t.test('agent links: active ones count, a revoked one frees its place', async (t) => {
  const org = await newOrg({ max_agent_links: 1 })
  const agent = (await gw.request('POST', '/v1/agents', { key: org.key, body: {} })).body.id
  const create = () => gw.request('POST', `/v1/agents/${agent}/links`, { key: org.key, body: {} })
  const first = await create()
  t.equal(first.status, 201)
  capped(t, await create(), 'limit_reached', 'max_agent_links', 1)
  await gw.request('DELETE', `/v1/agents/${agent}/links/${first.body.id}`, { key: org.key })
  t.equal((await create()).status, 201, 'revoking one frees its place')
  await raise(org.id, { max_agent_links: 2 })
  t.equal((await create()).status, 201, 'passes once raised')
})

t.test('SIP trunks keep their code sip_trunk_limit; the cap is now the operator’s to set', async (t) => {
  const org = await newOrg({ max_sip_trunks: 1 })
  const create = (name: string) =>
    gw.request('POST', '/v1/sip/trunks', { key: org.key, body: { name, inbound: { allowed_cidrs: ['198.51.100.0/24'] } } })
  t.equal((await create('a')).status, 201)
  capped(t, await create('b'), 'sip_trunk_limit', 'max_sip_trunks', 1)
  await raise(org.id, { max_sip_trunks: 2 })
  t.equal((await create('b')).status, 201, 'passes once raised')
})

t.test('creations at once cannot pass the last free place together', async (t) => {
  const org = await newOrg({ max_agents: 3 })
  const results = await Promise.all(Array.from({ length: 8 }, () => gw.request('POST', '/v1/agents', { key: org.key, body: {} })))
  t.equal(results.filter((r) => r.status === 201).length, 3, 'exactly the cap created')
  t.ok(
    results.every((r) => r.status === 201 || r.status === 409),
    'the rest refused with 409',
  )
})
