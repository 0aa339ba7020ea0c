// The answers the console reads match their schemas in the OpenAPI document field by field (the console's types
// are generated from those schemas, so a schema that drifted from the route would lie to the console's compiler).
import t from 'tap'
import { authorizedSessionRow, startTestGateway } from '../helpers/gateway.js'
import { recordDeliveryAttempt, recordDeliveryStart } from '../../gateway/store/webhook-deliveries.js'

type Schema = Record<string, any>

const gw = await startTestGateway()
t.teardown(() => gw.close())
const doc = (await gw.request('GET', '/openapi.json', { key: null })).body
const schemas: Record<string, Schema> = doc.components.schemas

const agentId: string = (await gw.request('GET', '/v1/agents')).body.agents[0].id
await gw.request('PUT', `/admin/v1/organizations/${gw.orgId}/phone_numbers/${encodeURIComponent('+14155552671')}`, { admin: true })
const assigned = await gw.request('POST', `/v1/agents/${agentId}/phone_numbers`, {
  body: { phone_number: '+14155552671', carrier_sid: 'PN123', friendly_name: 'Main line' },
})

const TYPE_CHECKS: Record<string, (v: unknown) => boolean> = {
  null: (v) => v === null,
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number',
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
  array: (v) => Array.isArray(v),
  object: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
}

/**
 * Where `value` departs from `schema` (the subset of JSON Schema the document uses): type, enum, const, required,
 * items, any/one of, and no field the schema does not name (unless it allows more), so "exactly the documented
 * fields" holds at every level.
 */
function departures(value: unknown, schema: Schema, at = '$'): string[] {
  if (typeof schema.$ref === 'string') return departures(value, schemas[schema.$ref.split('/').at(-1) as string] as Schema, at)
  const branches: Schema[] | undefined = schema.anyOf ?? schema.oneOf
  if (branches !== undefined) {
    const each = branches.map((b) => departures(value, b, at))
    return each.some((d) => d.length === 0) ? [] : [`${at}: matches none of ${branches.length} branches (${each.flat().join('; ')})`]
  }
  const types: string[] | undefined = schema.type === undefined ? undefined : [schema.type].flat()
  if (types !== undefined && !types.some((type) => TYPE_CHECKS[type]?.(value)))
    return [`${at}: ${JSON.stringify(value)} is not ${types.join(' or ')}`]
  if (schema.enum !== undefined && !schema.enum.includes(value)) return [`${at}: ${JSON.stringify(value)} is not one of the enum`]
  if (schema.const !== undefined && value !== schema.const) return [`${at}: ${JSON.stringify(value)} is not ${schema.const}`]
  if (Array.isArray(value)) return schema.items === undefined ? [] : value.flatMap((v, i) => departures(v, schema.items, `${at}[${i}]`))
  if (!TYPE_CHECKS.object?.(value) || schema.properties === undefined) return []
  const record = value as Record<string, unknown>
  const out = (schema.required ?? []).filter((f: string) => !(f in record)).map((f: string) => `${at}.${f}: missing`)
  for (const [field, v] of Object.entries(record)) {
    const property = schema.properties[field]
    if (property !== undefined) out.push(...departures(v, property, `${at}.${field}`))
    else if (!schema.additionalProperties) out.push(`${at}.${field}: not in the schema`)
  }
  return out
}

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` })

t.test('the check finds a missing field, an undocumented one and a wrong type, nested too', async (t) => {
  const assignment = { phone_number: '+15551234567', carrier_sid: null, friendly_name: null, assigned_at: '2026-11-25T10:00:00.000Z' }
  t.same(departures(assignment, ref('PhoneAssignment')), [])
  const { friendly_name: _, ...without } = assignment
  t.same(departures(without, ref('PhoneAssignment')), ['$.friendly_name: missing'])
  t.same(departures({ ...assignment, sid: 'x' }, ref('PhoneAssignment')), ['$.sid: not in the schema'])
  const day = { date: '2026-11-25', sessions: 1, minutes: 2, turns: 3, latency_p50_ms: 800, latency_p90_ms: null, latency_p99_ms: null }
  t.same(departures({ days: [day] }, ref('DailyStatsList')), [])
  t.same(departures({ days: [{ ...day, date: 1 }] }, ref('DailyStatsList')), ['$.days[0].date: 1 is not string'])
})

t.test("the agents' answers: the list (with phone numbers) and one agent with its config", async (t) => {
  t.equal(assigned.status, 201)
  t.same(departures(assigned.body, ref('PhoneAssignment')), [], 'the assignment')
  const list = (await gw.request('GET', '/v1/agents')).body
  t.ok(
    list.agents.some((a: { assigned_phone_numbers: unknown[] }) => a.assigned_phone_numbers.length > 0),
    'a listed number',
  )
  t.same(departures(list, ref('AgentList')), [], 'GET /v1/agents')
  const agent = (await gw.request('GET', `/v1/agents/${agentId}`)).body
  t.ok(agent.config.plugins.length > 0)
  t.same(departures(agent, ref('Agent')), [], 'GET /v1/agents/{agent_id}, its config as the pipeline schema gives it')
})

t.test("a session's details, with a turn, and its webhook deliveries", async (t) => {
  const row = await authorizedSessionRow(gw, agentId)
  await gw.store.db
    .insertInto('transcript_entries')
    .values({
      session_id: row.id,
      conversation_id: row.conversation_id,
      seq: 0,
      turn_id: 't1',
      timestamp: new Date(),
      user_message: 'hi',
      assistant_message: 'hello',
      latency_ms: 820,
    })
    .execute()
  const base = `/v1/agents/${agentId}/sessions/${row.id}`
  const details = (await gw.request('GET', base)).body
  t.equal(details.transcript.length, 1)
  t.same(departures(details, ref('SessionDetails')), [], 'GET .../sessions/{session_id}')
  const delivery = await recordDeliveryStart(gw.store.db, {
    sessionId: row.id,
    organizationId: row.organization_id,
    type: 'session.end',
    url: 'http://127.0.0.1:9/hook',
    body: '{}',
  })
  await recordDeliveryAttempt(gw.store.db, delivery, { ok: false, attempts: 2, status: 503, final: true })
  const deliveries = (await gw.request('GET', `${base}/webhook_deliveries`)).body
  t.equal(deliveries.deliveries.length, 1)
  t.same(departures(deliveries, ref('WebhookDeliveryList')), [], 'GET .../webhook_deliveries')
})

t.test('the daily stats', async (t) => {
  const stats = (await gw.request('GET', '/v1/stats/daily?days=3')).body
  t.equal(stats.days.length, 3)
  t.same(departures(stats, ref('DailyStatsList')), [], 'GET /v1/stats/daily')
})

t.test('the operations the console reads name their answer schema', async (t) => {
  const answer = (path: string) => doc.paths[path].get.responses['200'].content['application/json'].schema.$ref
  t.same(
    [
      '/v1/agents',
      '/v1/agents/{agent_id}',
      '/v1/sessions',
      '/v1/agents/{agent_id}/sessions/{session_id}',
      '/v1/agents/{agent_id}/sessions/{session_id}/webhook_deliveries',
      '/v1/stats/daily',
    ].map(answer),
    ['AgentList', 'Agent', 'SessionList', 'SessionDetails', 'WebhookDeliveryList', 'DailyStatsList'].map(
      (s) => `#/components/schemas/${s}`,
    ),
  )
})

t.test("the SIP trunks' answers: each side present or null, never a password", async (t) => {
  const both = await gw.request('POST', '/v1/sip/trunks', {
    body: {
      name: 'PBX',
      inbound: { allowed_cidrs: ['192.0.2.0/24'] },
      outbound: { uri: 'sip:pbx.example.com', from_number: '+14155552671' },
    },
  })
  t.equal(both.status, 201, both.text)
  t.same(departures(both.body, ref('SipTrunk')), [], 'POST /v1/sip/trunks')
  const outboundOnly = await gw.request('POST', '/v1/sip/trunks', { body: { name: 'Carrier', outbound: { uri: 'sips:sip.example.net' } } })
  t.equal(outboundOnly.body.inbound, null)
  t.same(departures(outboundOnly.body, ref('SipTrunk')), [], 'a null side')
  t.same(
    departures({ ...both.body, inbound: { ...both.body.inbound, password: 'x' } }, ref('SipTrunk')).length,
    1,
    'a password field would depart',
  )
  const list = (await gw.request('GET', '/v1/sip/trunks')).body
  t.equal(list.trunks.length, 2)
  t.same(departures(list, ref('SipTrunkList')), [], 'GET /v1/sip/trunks')
  const path = doc.paths['/v1/sip/trunks/{trunk_id}']
  t.same(Object.keys(path).sort(), ['delete', 'get', 'patch'])
  t.equal(path.patch.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/SipTrunk')
})
