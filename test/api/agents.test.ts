import t from 'tap'
import { startTestGateway } from '../helpers/gateway.js'

const gw = await startTestGateway()
t.teardown(() => gw.close())

const other = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'Other' } })
const otherKey: string = other.body.api_key

async function newAgent(body: unknown = {}, key?: string) {
  const r = await gw.request('POST', '/v1/agents', { body, key })
  if (r.status !== 201) throw new Error(`create agent failed: ${r.status} ${r.text}`)
  return r.body
}

t.test('bearer token: missing or invalid is 400 with an error body', async (t) => {
  for (const [key, re] of [
    [null, /missing bearer token/],
    ['vgk_wrong', /invalid bearer token/],
  ] as const) {
    const r = await gw.request('GET', '/v1/agents', { key })
    t.equal(r.status, 400)
    t.match(r.body.error, re)
  }
  const basic = await gw.request('GET', '/v1/agents', { key: null, headers: { authorization: 'Basic abc' } })
  t.equal(basic.status, 400)
})

t.test('create from the default template', async (t) => {
  const a = await newAgent()
  for (const f of ['id', 'name', 'type', 'config', 'webhook_secret', 'agent_template_id']) t.ok(f in a, `has ${f}`)
  t.equal(a.name, `My Agent ${a.id}`)
  t.equal(a.type, 'voice')
  t.type(a.webhook_secret, 'string')
  t.ok(a.webhook_secret.length >= 32)
  t.type(a.agent_template_id, 'string')
  t.ok(Array.isArray(a.config.plugins))
  t.ok(a.config.clients)
  t.equal(a.config.session_duration_timeout_minutes, 30, 'defaults filled')
  // No TTS vendor key configured here, so the template speaks with the local engine.
  t.ok(a.config.plugins.some((p: { use: string }) => p.use === 'tts.local'))
  t.notOk(a.config.plugins.some((p: { use: string }) => p.use === 'tts.vendor_a'))
})

t.test('create with a name and each template; unknown template 404; bad body 400', async (t) => {
  const named = await newAgent({ name: 'Front desk' })
  t.equal(named.name, 'Front desk')
  const templates = await gw.store.db.selectFrom('agent_templates').select(['id']).execute()
  t.ok(templates.length >= 2)
  for (const tpl of templates) {
    const a = await newAgent({ template_id: tpl.id })
    t.equal(a.agent_template_id, tpl.id)
  }
  const nf = await gw.request('POST', '/v1/agents', { body: { template_id: 'nope' } })
  t.equal(nf.status, 404)
  t.match(nf.body.error, /template/)
  const bad = await gw.request('POST', '/v1/agents', { body: { name: 7 } })
  t.equal(bad.status, 400)
  t.match(bad.body.error, /name must be a string/)
  const unknown = await gw.request('POST', '/v1/agents', { body: { nmae: 'typo' } })
  t.equal(unknown.status, 400)
  t.match(unknown.body.error, /nmae is not a known field/)
})

t.test('list and get', async (t) => {
  const a = await newAgent({ name: 'Listed' })
  const list = await gw.request('GET', '/v1/agents')
  t.equal(list.status, 200)
  const item = list.body.agents.find((x: { id: string }) => x.id === a.id)
  t.ok(item)
  t.same(Object.keys(item).sort(), ['agent_template_id', 'assigned_phone_numbers', 'created_at', 'id', 'name', 'type', 'updated_at'])
  t.ok(!Number.isNaN(Date.parse(item.created_at)))
  t.same(item.assigned_phone_numbers, [])
  const g = await gw.request('GET', `/v1/agents/${a.id}`)
  t.equal(g.status, 200)
  t.equal(g.body.id, a.id)
  t.equal(g.body.name, 'Listed')
  t.same(g.body.config, a.config)
  const nf = await gw.request('GET', '/v1/agents/agt_missing')
  t.equal(nf.status, 404)
  t.equal(nf.body.error, 'agent not found')
})

t.test('another organization cannot see or change an agent', async (t) => {
  const a = await newAgent({ name: 'Mine' })
  t.equal((await gw.request('GET', `/v1/agents/${a.id}`, { key: otherKey })).status, 404)
  t.equal((await gw.request('POST', `/v1/agents/${a.id}`, { key: otherKey, body: { name: 'x' } })).status, 404)
  t.equal(
    (await gw.request('POST', `/v1/agents/${a.id}/phone_numbers`, { key: otherKey, body: { phone_number: '+14155552671' } })).status,
    404,
  )
  const list = await gw.request('GET', '/v1/agents', { key: otherKey })
  t.notOk(list.body.agents.some((x: { id: string }) => x.id === a.id))
})

t.test('update: name, webhook_url switches to agent.webhook and leaves demo mode', async (t) => {
  const a = await newAgent()
  t.equal(a.demo_mode, true)
  const renamed = await gw.request('POST', `/v1/agents/${a.id}`, { body: { name: 'Renamed' } })
  t.equal(renamed.status, 200)
  t.equal(renamed.body.name, 'Renamed')
  t.same(renamed.body.config, a.config, 'config unchanged')
  const wh = await gw.request('POST', `/v1/agents/${a.id}`, { body: { webhook_url: 'https://backend.example.com/api/agent' } })
  t.equal(wh.status, 200)
  t.equal(wh.body.demo_mode, false)
  t.equal(wh.body.name, 'Renamed', 'name unchanged when omitted')
  const uses = wh.body.config.plugins.map((p: { use: string }) => p.use)
  t.ok(uses.includes('agent.webhook'))
  t.notOk(uses.includes('agent.llm'))
  const webhook = wh.body.config.plugins.find((p: { use: string }) => p.use === 'agent.webhook')
  t.equal(webhook.options.url, 'https://backend.example.com/api/agent')
  const again = await gw.request('GET', `/v1/agents/${a.id}`)
  t.same(again.body.config, wh.body.config, 'persisted')
})

t.test('update: webhook_url must be https (loopback http allowed with ALLOW_INSECURE_WEBHOOKS)', async (t) => {
  const a = await newAgent()
  const bad = await gw.request('POST', `/v1/agents/${a.id}`, { body: { webhook_url: 'http://backend.example.com/hook' } })
  t.equal(bad.status, 400)
  t.match(bad.body.error, /https/)
  const loop = await gw.request('POST', `/v1/agents/${a.id}`, { body: { webhook_url: 'http://127.0.0.1:4000/hook' } })
  t.equal(loop.status, 200)
  const strict = await startTestGateway({ ALLOW_INSECURE_WEBHOOKS: '0' })
  t.teardown(() => strict.close())
  const b = await strict.request('POST', '/v1/agents', { body: {} })
  const refused = await strict.request('POST', `/v1/agents/${b.body.id}`, { body: { webhook_url: 'http://127.0.0.1:4000/hook' } })
  t.equal(refused.status, 400)
  t.match(refused.body.error, /https/)
})

t.test('update: a full config is validated, errors name the field and rule', async (t) => {
  const a = await newAgent()
  const cfg = structuredClone(a.config)
  const tm = cfg.plugins.find((p: { use: string }) => p.use === 'turn_manager')
  tm.options = { ...tm.options, base_timeout_ms: 100 }
  const bad = await gw.request('POST', `/v1/agents/${a.id}`, { body: { config: cfg } })
  t.equal(bad.status, 400)
  t.match(bad.body.error, /plugins\[\d\]\.options\.base_timeout_ms must be between 500 and 5000/)
  t.ok(Array.isArray(bad.body.details))
  tm.options.base_timeout_ms = 1500
  const ok = await gw.request('POST', `/v1/agents/${a.id}`, { body: { config: cfg } })
  t.equal(ok.status, 200)
  t.equal(ok.body.config.plugins.find((p: { use: string }) => p.use === 'turn_manager').options.base_timeout_ms, 1500)
  const missing = await gw.request('POST', `/v1/agents/${a.id}`, { body: { config: { plugins: [] } } })
  t.equal(missing.status, 400)
  t.match(missing.body.error, /clients is required/)
})

t.test('update: the privacy block is validated like the rest, a bad value is a 400 error body', async (t) => {
  const a = await newAgent()
  const cfg = structuredClone(a.config)
  cfg.privacy = { transcripts: 'everything' }
  const bad = await gw.request('POST', `/v1/agents/${a.id}`, { body: { config: cfg } })
  t.equal(bad.status, 400)
  t.match(bad.body.error, /privacy\.transcripts/)
  cfg.privacy = { transcripts: 'none', recordings: false, retention_days: 7, redact: { email: true } }
  const ok = await gw.request('POST', `/v1/agents/${a.id}`, { body: { config: cfg } })
  t.equal(ok.status, 200)
  t.strictSame(ok.body.config.privacy, {
    redact: { cards: true, ssn: true, iban: false, email: true, phone: false },
    redact_webhooks: false,
    transcripts: 'none',
    recordings: false,
    retention_days: 7,
  })
})

t.test('phone numbers: normalised, listed, conflicts, removal', async (t) => {
  const a = await newAgent()
  const b = await newAgent()
  // The operator gives the number to this organization first (the other way is its carrier account owning it).
  const reserve = await gw.request('PUT', `/admin/v1/organizations/${gw.orgId}/phone_numbers/${encodeURIComponent('+14155552671')}`, {
    admin: true,
  })
  t.equal(reserve.status, 201)
  const r = await gw.request('POST', `/v1/agents/${a.id}/phone_numbers`, {
    body: { phone_number: '+1 (415) 555-2671', carrier_sid: 'PN123', friendly_name: 'Main line' },
  })
  t.equal(r.status, 201)
  t.equal(r.body.phone_number, '+14155552671')
  t.equal(r.body.carrier_sid, 'PN123')
  t.equal(r.body.friendly_name, 'Main line')
  t.ok(!Number.isNaN(Date.parse(r.body.assigned_at)))
  const g = await gw.request('GET', `/v1/agents/${a.id}`)
  t.same(g.body.assigned_phone_numbers, [r.body])
  const list = await gw.request('GET', '/v1/agents')
  t.same(list.body.agents.find((x: { id: string }) => x.id === a.id).assigned_phone_numbers, [r.body])
  const invalid = await gw.request('POST', `/v1/agents/${a.id}/phone_numbers`, { body: { phone_number: '12345' } })
  t.equal(invalid.status, 400)
  t.match(invalid.body.error, /not a valid/)
  const taken = await gw.request('POST', `/v1/agents/${b.id}/phone_numbers`, { body: { phone_number: '+14155552671' } })
  t.equal(taken.status, 409)
  const takenOtherOrg = await gw.request('POST', '/v1/agents', { key: otherKey, body: {} })
  const t2 = await gw.request('POST', `/v1/agents/${takenOtherOrg.body.id}/phone_numbers`, {
    key: otherKey,
    body: { phone_number: '+14155552671' },
  })
  t.equal(t2.status, 404, "another organization's number is not available to it")
  t.equal(t2.body.code, 'phone_number_not_available')
  const wrongAgentDelete = await gw.request('DELETE', `/v1/agents/${b.id}/phone_numbers/${encodeURIComponent('+14155552671')}`)
  t.equal(wrongAgentDelete.status, 404)
  const del = await gw.request('DELETE', `/v1/agents/${a.id}/phone_numbers/${encodeURIComponent('+14155552671')}`)
  t.equal(del.status, 204)
  t.same((await gw.request('GET', `/v1/agents/${a.id}`)).body.assigned_phone_numbers, [])
  const nowFree = await gw.request('POST', `/v1/agents/${b.id}/phone_numbers`, { body: { phone_number: '+14155552671' } })
  t.equal(nowFree.status, 201)
})

t.test('generic HTTP errors: unknown route 404, wrong method 405, oversized 413, wrong type 415', async (t) => {
  const nf = await gw.request('GET', '/v1/nothing-here')
  t.equal(nf.status, 404)
  t.type(nf.body.error, 'string')
  const nf2 = await gw.request('GET', '/nothing', { key: null })
  t.equal(nf2.status, 404)
  const m = await gw.request('DELETE', '/v1/agents')
  t.equal(m.status, 405)
  t.type(m.body.error, 'string')
  const big = await gw.request('POST', '/v1/agents', {
    rawBody: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
    headers: { 'content-type': 'application/json' },
  })
  t.equal(big.status, 413)
  t.equal(big.body.error, 'request body too large')
  const xml = await gw.request('POST', '/v1/agents', { rawBody: '<a/>', headers: { 'content-type': 'text/xml' } })
  t.equal(xml.status, 415)
  const health = await gw.request('GET', '/healthz', { key: null })
  t.same(health.body, { status: 'ok' })
  const ready = await gw.request('GET', '/readyz', { key: null })
  t.equal(ready.status, 200)
  t.equal(ready.body.status, 'ready')
})

t.test('no stack or SQL reaches a client on internal errors', async (t) => {
  // Drop a table under the gateway: the query fails inside the route.
  await gw.store.db.schema.alterTable('phone_numbers').renameTo('phone_numbers_moved').execute()
  t.teardown(() => gw.store.db.schema.alterTable('phone_numbers_moved').renameTo('phone_numbers').execute())
  const r = await gw.request('GET', '/v1/agents')
  t.equal(r.status, 500)
  t.same(r.body, { error: 'internal error', code: 'internal' })
  t.notMatch(r.text, /phone_numbers|select|at /i)
})
