import { createHmac } from 'node:crypto'
import t from 'tap'
import { eventually } from '../helpers/eventually.js'
import { startWebhookReceiver } from '../helpers/webhook-receiver.js'
import {
  campaignBody,
  campaignTenant,
  contactsOf,
  MONDAY_1500_UTC,
  runCampaign,
  startCampaignWorld,
  startScriptedApi,
  waitForStatus,
} from './campaign-setup.js'

const { c, clock } = await startCampaignWorld()
t.teardown(() => c.gw.close())
const LONDON = '+442071838751'
const TOKYO = '+81312345678'
const NEW_YORK = '+12025550143'
const LONDON_IN_TOKYO = '+442071838752'

t.test("the calling window is read in each callee's zone: by number, by the contact's own zone, or the default", async (t) => {
  clock.now = MONDAY_1500_UTC
  const { api, dialled } = await startScriptedApi(c, {})
  t.teardown(() => api.close())
  const tenant = await campaignTenant(c, api)
  const id = await runCampaign(
    c,
    tenant,
    campaignBody(tenant, { calling_window: { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00' } }),
    [
      { phone_number: LONDON },
      { phone_number: TOKYO },
      { phone_number: NEW_YORK },
      { phone_number: LONDON_IN_TOKYO, timezone: 'Asia/Tokyo' },
    ],
  )
  await eventually(async () => {
    const cs = await contactsOf(c, tenant, id)
    return cs.get(LONDON)?.status === 'done' && cs.get(NEW_YORK)?.status === 'done' ? true : undefined
  }, 10_000)
  // Several more ticks: Tokyo stays out of its window (midnight there).
  await new Promise((r) => setTimeout(r, 300))
  let cs = await contactsOf(c, tenant, id)
  t.match(cs.get(LONDON), { timezone: 'Europe/London', disposition: 'no_answer', attempts: 1 })
  t.match(cs.get(NEW_YORK), { timezone: 'America/New_York', disposition: 'no_answer' }, 'a US number is ambiguous: the default zone')
  t.match(cs.get(TOKYO), { timezone: 'Asia/Tokyo', status: 'pending', attempts: 0 })
  t.match(cs.get(LONDON_IN_TOKYO), { timezone: 'Asia/Tokyo', status: 'pending', attempts: 0 }, "the contact's own zone wins")
  t.same([...dialled.keys()].sort(), [NEW_YORK, LONDON].sort(), 'only the callees inside their window were dialled')
  const progress = await c.gw.request('GET', `/v1/campaigns/${id}/progress`, { key: tenant.apiKey })
  t.match(
    progress.body,
    { contacts: 4, dialled: 2, remaining: 2, next_window_at: '2026-12-01T00:00:00.000Z' },
    'Tokyo opens at 09:00 local',
  )
  // Nine hours later it is 09:00 on Tuesday in Tokyo.
  clock.now = new Date('2026-12-01T00:00:00Z')
  cs = await waitForStatus(c, tenant, id, 'completed')
  t.match(cs.get(TOKYO), { status: 'done', disposition: 'no_answer' })
  t.equal(dialled.get(TOKYO), 1)
  clock.now = MONDAY_1500_UTC
})

t.test('retries by outcome: busy twice then answered; no answer up to its attempts; failed not retried', async (t) => {
  const BUSY_THEN_ANSWER = '+14155550101'
  const NO_ANSWER = '+14155550102'
  const FAILS = '+14155550103'
  const { api, dialled } = await startScriptedApi(c, {
    [BUSY_THEN_ANSWER]: ['busy', 'busy', 'answer'],
    [NO_ANSWER]: ['no-answer'],
    [FAILS]: ['failed'],
  })
  t.teardown(() => api.close())
  const tenant = await campaignTenant(c, api)
  const id = await runCampaign(
    c,
    tenant,
    campaignBody(tenant, {
      retry: {
        busy: { max_attempts: 5, delay_seconds: 0 },
        no_answer: { max_attempts: 2, delay_seconds: 0 },
        failed: { max_attempts: 1, delay_seconds: 0 },
      },
    }),
    [{ phone_number: BUSY_THEN_ANSWER, custom_metadata: { order: 'A-17' } }, { phone_number: NO_ANSWER }, { phone_number: FAILS }],
  )
  // The answered call connects to the agent; the callee hangs up once it is connected.
  const answered = await eventually(async () => {
    const call = [...api.calls.values()].find((x) => x.phone?.outcome === 'connected')
    return call
  }, 15_000)
  const phone = answered.phone
  if (phone?.outcome === 'connected') await phone.call.hangup()
  const cs = await waitForStatus(c, tenant, id, 'completed')
  t.match(cs.get(BUSY_THEN_ANSWER), { disposition: 'answered', attempts: 3, custom_metadata: { order: 'A-17' } })
  t.same(
    cs.get(BUSY_THEN_ANSWER).history.map((a: { outcome: string }) => a.outcome),
    ['busy', 'busy', 'answered'],
  )
  t.match(cs.get(NO_ANSWER), { disposition: 'no_answer', attempts: 2 })
  t.match(cs.get(FAILS), { disposition: 'failed', attempts: 1 })
  t.same(
    Object.fromEntries(dialled),
    { [BUSY_THEN_ANSWER]: 3, [NO_ANSWER]: 2, [FAILS]: 1 },
    'each dialled exactly as often as its policy says',
  )
  // Each attempt is a normal outbound session that names its campaign and contact.
  const sessionId = cs.get(BUSY_THEN_ANSWER).history[2].session_id
  const row = await c.gw.store.db.selectFrom('sessions').selectAll().where('id', '=', sessionId).executeTakeFirstOrThrow()
  t.match(row, { direction: 'outbound-api', campaign_contact_id: cs.get(BUSY_THEN_ANSWER).id, end_reason: 'caller_hangup' })
  t.same(row.metadata, { campaign_id: id, contact_id: cs.get(BUSY_THEN_ANSWER).id, custom_metadata: { order: 'A-17' } })
  const progress = await c.gw.request('GET', `/v1/campaigns/${id}/progress`, { key: tenant.apiKey })
  t.match(progress.body, {
    status: 'completed',
    contacts: 3,
    dialled: 3,
    reached: 1,
    failed: 2,
    remaining: 0,
    attempts: 6,
    next_window_at: null,
  })
})

t.test('the do-not-call list is checked before every dial, campaign or not', async (t) => {
  const LISTED = '+14155550111'
  const FREE = '+14155550112'
  const { api, dialled } = await startScriptedApi(c, {})
  t.teardown(() => api.close())
  const tenant = await campaignTenant(c, api)
  const add = await c.gw.request('POST', '/v1/dnc', { key: tenant.apiKey, body: { phone_numbers: [LISTED, 'nope'] } })
  t.match(add.body, { received: 2, added: 1, rejected: 1, errors: [{ row: 2, phone_number: 'nope' }] })
  const check = await c.gw.request('GET', `/v1/dnc/${encodeURIComponent(LISTED)}`, { key: tenant.apiKey })
  t.match(check.body, { phone_number: LISTED, listed: true, source: 'api' })
  const direct = await c.gw.request('POST', `/v1/agents/${tenant.agentId}/calls/initiate_outbound`, {
    key: tenant.apiKey,
    body: { from_phone_number: tenant.number, to_phone_number: LISTED },
  })
  t.equal(direct.status, 403)
  t.equal(direct.body.code, 'do_not_call')
  const id = await runCampaign(c, tenant, campaignBody(tenant), [{ phone_number: LISTED }, { phone_number: FREE }])
  const cs = await waitForStatus(c, tenant, id, 'completed')
  t.match(cs.get(LISTED), { status: 'done', disposition: 'dnc', attempts: 0 })
  t.match(cs.get(FREE), { disposition: 'no_answer' })
  t.same([...dialled.keys()], [FREE], 'the listed number never reached the carrier')
  const other = await campaignTenant(c, api)
  const elsewhere = await c.gw.request('GET', `/v1/dnc/${encodeURIComponent(LISTED)}`, { key: other.apiKey })
  t.equal(elsewhere.body.listed, false, "one organization's list is its own")
  const removed = await c.gw.request('DELETE', `/v1/dnc/${encodeURIComponent(LISTED)}`, { key: tenant.apiKey })
  t.same(removed.body, { phone_number: LISTED, removed: true })
  const csv = await c.gw.request('POST', '/v1/dnc', {
    key: tenant.apiKey,
    rawBody: `phone_number\r\n${LISTED}\r\n+1 415 555 0113\r\nbad\r\n`,
    headers: { 'content-type': 'text/csv' },
  })
  t.match(csv.body, { received: 3, added: 2, rejected: 1, errors: [{ row: 3, phone_number: 'bad' }] })
})

t.test('pause stops new dials (calls in progress finish); resume goes on; concurrency is never passed', async (t) => {
  const numbers = Array.from({ length: 12 }, (_, i) => `+1415555${String(200 + i).padStart(4, '0')}`)
  // Each call rings ~8 steps of 40 ms before no-answer, so several overlap.
  const { api, dialled } = await startScriptedApi(c, {}, { kind: 'no-answer' }, 40)
  t.teardown(() => api.close())
  const tenant = await campaignTenant(c, api)
  await c.gw.request('PATCH', `/admin/v1/organizations/${tenant.orgId}`, { admin: true, body: { outbound_calls_per_second: 50 } })
  const id = await runCampaign(
    c,
    tenant,
    campaignBody(tenant, { max_concurrency: 3 }),
    numbers.map((phone_number) => ({ phone_number })),
  )
  let most = 0
  const watch = setInterval(async () => {
    const live = await c.gw.store.db
      .selectFrom('sessions')
      .innerJoin('campaign_contacts', 'campaign_contacts.id', 'sessions.campaign_contact_id')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('campaign_contacts.campaign_id', '=', id)
      .where('sessions.status', '!=', 'ended')
      .executeTakeFirstOrThrow()
    most = Math.max(most, Number(live.n))
  }, 10)
  t.teardown(() => clearInterval(watch))
  await eventually(async () => (dialled.size >= 3 ? true : undefined), 10_000)
  const paused = await c.gw.request('POST', `/v1/campaigns/${id}/pause`, { key: tenant.apiKey })
  t.equal(paused.body.status, 'paused')
  const again = await c.gw.request('POST', `/v1/campaigns/${id}/pause`, { key: tenant.apiKey })
  t.equal(again.status, 409)
  t.equal(again.body.code, 'campaign_state')
  // Calls in progress finish and settle; nobody new is dialled while paused.
  await eventually(async () => {
    const r = await c.gw.request('GET', `/v1/campaigns/${id}`, { key: tenant.apiKey })
    return r.body.counts.dialing === 0 ? true : undefined
  }, 10_000)
  const atPause = dialled.size
  await new Promise((r) => setTimeout(r, 400))
  t.equal(dialled.size, atPause, 'no dial while paused')
  t.ok(atPause < numbers.length, 'the pause came before the end')
  t.equal((await c.gw.request('POST', `/v1/campaigns/${id}/resume`, { key: tenant.apiKey })).body.status, 'running')
  const cs = await waitForStatus(c, tenant, id, 'completed')
  t.equal(dialled.size, numbers.length)
  t.ok(
    [...dialled.values()].every((n) => n === 1),
    'nobody dialled twice',
  )
  t.ok([...cs.values()].every((x) => x.disposition === 'no_answer'))
  t.ok(most <= 3, `at most 3 calls at once (saw ${most})`)
  t.ok(most >= 2, `calls overlapped (saw ${most})`)
})

t.test('contacts: CSV import reports bad rows without failing the batch; the list and the CSV export', async (t) => {
  const { api } = await startScriptedApi(c, {})
  t.teardown(() => api.close())
  const tenant = await campaignTenant(c, api)
  const created = await c.gw.request('POST', '/v1/campaigns', { key: tenant.apiKey, body: campaignBody(tenant) })
  t.equal(created.status, 201, created.text)
  const id = created.body.id
  const csv = [
    'phone_number,timezone,first_name,note',
    '+442071838751,,Ann,"likes ""tea"", mornings"',
    'not-a-number,,Bob,',
    '+14155550301,Mars/Olympus,Cy,',
    '+14155550302,America/Chicago,Di,',
    '+44 20 7183 8751,,Ann again,',
    '+14155550303,,=HYPERLINK("x"),',
  ].join('\r\n')
  const added = await c.gw.request('POST', `/v1/campaigns/${id}/contacts`, {
    key: tenant.apiKey,
    rawBody: csv,
    headers: { 'content-type': 'text/csv' },
  })
  t.equal(added.status, 200, added.text)
  t.match(added.body, {
    received: 6,
    added: 3,
    rejected: 3,
    errors: [
      { row: 2, phone_number: 'not-a-number', error: /not a valid phone number/ },
      { row: 3, phone_number: '+14155550301', error: /IANA time zone/ },
      { row: 5, error: 'duplicate of row 1' },
    ],
  })
  const again = await c.gw.request('POST', `/v1/campaigns/${id}/contacts`, {
    key: tenant.apiKey,
    body: { contacts: [{ phone_number: '+14155550302' }, { phone_number: '+14155550304', custom_metadata: 'x' }, 7] },
  })
  t.match(again.body, {
    added: 0,
    errors: [
      { row: 1, error: 'the campaign already has this number' },
      { row: 2, error: 'custom_metadata must be an object' },
      { row: 3, error: 'not an object' },
    ],
  })
  const list = await c.gw.request('GET', `/v1/campaigns/${id}/contacts?limit=2`, { key: tenant.apiKey })
  t.match(list.body.contacts, [
    {
      row: 1,
      phone_number: '+442071838751',
      timezone: 'Europe/London',
      status: 'pending',
      custom_metadata: { first_name: 'Ann', note: 'likes "tea", mornings' },
    },
    { row: 2, phone_number: '+14155550302', timezone: 'America/Chicago', custom_metadata: { first_name: 'Di' } },
  ])
  t.equal(list.body.next_after, 2)
  const rest = await c.gw.request('GET', `/v1/campaigns/${id}/contacts?limit=2&after=2`, { key: tenant.apiKey })
  t.match(rest.body, { contacts: [{ row: 3, phone_number: '+14155550303', timezone: 'America/New_York' }], next_after: null })
  const exported = await c.gw.request('GET', `/v1/campaigns/${id}/export`, { key: tenant.apiKey })
  t.equal(exported.status, 200)
  t.match(exported.headers.get('content-type'), /^text\/csv/)
  const lines = exported.text.trimEnd().split('\r\n')
  t.equal(lines[0], 'row,phone_number,timezone,status,disposition,attempts,last_outcome,last_session_id,last_attempt_at,custom_metadata')
  t.equal(lines.length, 4)
  t.match(lines[1], /^1,\+442071838751,Europe\/London,pending,,0,,,,"\{.*""first_name"":""Ann""/)
  t.match(lines[3], /^3,\+14155550303,America\/New_York,pending,,0,,,,"\{""first_name"":""=HYPERLINK/, 'metadata is one JSON cell')
  const bad = await c.gw.request('POST', '/v1/campaigns', {
    key: tenant.apiKey,
    body: campaignBody(tenant, { default_timezone: 'Nowhere/Land', calling_window: { days: ['mon'], start: '18:00', end: '09:00' } }),
  })
  t.equal(bad.status, 400)
  t.match(bad.body.error, /calling_window\.end/)
  const badZone = await c.gw.request('POST', '/v1/campaigns', {
    key: tenant.apiKey,
    body: campaignBody(tenant, { default_timezone: 'Nowhere/Land' }),
  })
  t.match(badZone.body, { code: 'validation_failed', error: /default_timezone/ })
  const notOurs = await c.gw.request('GET', `/v1/campaigns/${id}`, { key: (await campaignTenant(c, api)).apiKey })
  t.equal(notOurs.status, 404, "another organization's campaign is not found")
  t.equal((await c.gw.request('POST', `/v1/campaigns/${id}/cancel`, { key: tenant.apiKey })).body.status, 'canceled')
  const after = await contactsOf(c, tenant, id)
  t.ok(
    [...after.values()].every((x) => x.disposition === 'canceled'),
    'a canceled campaign ends its contacts',
  )
  const late = await c.gw.request('POST', `/v1/campaigns/${id}/contacts`, { key: tenant.apiKey, body: { contacts: [] } })
  t.equal(late.status, 409)
})

t.test('lifecycle webhooks, opt-in: campaign.started, campaign.paused, campaign.completed to the session webhook', async (t) => {
  const receiver = await startWebhookReceiver()
  t.teardown(() => receiver.close())
  const { api } = await startScriptedApi(c, {})
  t.teardown(() => api.close())
  const tenant = await campaignTenant(c, api, {
    config: (cfg) => ({ ...cfg, session_webhook: { url: `${receiver.url}/lifecycle`, events: ['session.end'] } }),
  })
  const quiet = await runCampaign(c, tenant, campaignBody(tenant, { name: 'quiet' }), [{ phone_number: '+14155550601' }])
  await waitForStatus(c, tenant, quiet, 'completed')
  const id = await runCampaign(c, tenant, campaignBody(tenant, { lifecycle_webhooks: true }), [{ phone_number: '+14155550602' }])
  const started = await receiver.waitFor((r) => r.json?.type === 'campaign.started')
  t.match(started.json, { type: 'campaign.started', campaign_id: id, status: 'running', contacts: 1 })
  const sig = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(started.headers['service-signature']))
  t.equal(
    sig?.[2],
    createHmac('sha256', tenant.webhookSecret).update(`${sig?.[1]}.${started.raw}`).digest('hex'),
    "signed with the agent's secret",
  )
  const completed = await receiver.waitFor((r) => r.json?.type === 'campaign.completed', 15_000)
  t.match(completed.json, { campaign_id: id, status: 'completed', pending: 0, dispositions: { no_answer: 1 } })
  const campaignEvents = receiver.requests.filter((r) => String(r.json?.type).startsWith('campaign.'))
  t.same(
    campaignEvents.map((r) => [r.json.type, r.json.campaign_id]),
    [
      ['campaign.started', id],
      ['campaign.completed', id],
    ],
    'only the campaign that opted in; one completed, though every replica tick looks',
  )
  const paused = await c.gw.request('POST', `/v1/campaigns/${quiet}/pause`, { key: tenant.apiKey })
  t.equal(paused.status, 409, 'a completed campaign cannot pause')
})

t.test('the window closes while calls wait for their dial slots: those not yet dialled wait for the next window', async (t) => {
  // 16:59:57 in London: the window (until 17:00) closes in 3 s; the organization dials one call every 2 s.
  clock.now = new Date('2026-11-30T16:59:57Z')
  t.teardown(() => {
    clock.now = MONDAY_1500_UTC
  })
  const numbers = ['+442071838761', '+442071838762', '+442071838763']
  const { api, dialled } = await startScriptedApi(c, {})
  t.teardown(() => api.close())
  const tenant = await campaignTenant(c, api)
  await c.gw.request('PATCH', `/admin/v1/organizations/${tenant.orgId}`, { admin: true, body: { outbound_calls_per_second: 0.5 } })
  const id = await runCampaign(
    c,
    tenant,
    campaignBody(tenant, { calling_window: { days: ['mon'], start: '09:00', end: '17:00' } }),
    numbers.map((phone_number) => ({ phone_number })),
  )
  await eventually(async () => {
    const cs = await contactsOf(c, tenant, id)
    return [...cs.values()].every((x) => x.status !== 'pending') ? true : undefined
  }, 5_000)
  // Everyone is claimed; from now on the campaign's clock says the window has closed.
  clock.now = new Date('2026-11-30T17:00:30Z')
  const cs = await eventually(async () => {
    const all = await contactsOf(c, tenant, id)
    return [...all.values()].every((x) => x.status !== 'dialing') ? all : undefined
  }, 15_000)
  t.equal(dialled.size, 2, 'two calls dialled before the window closed')
  const left = [...cs.values()].filter((x) => x.status === 'pending')
  t.equal(left.length, 1, 'the third waits for the next window')
  t.match(left[0], { attempts: 0, last_outcome: 'not_dialled' })
  t.notOk(dialled.has(left[0].phone_number), 'it never reached the carrier')
  const progress = await c.gw.request('GET', `/v1/campaigns/${id}/progress`, { key: tenant.apiKey })
  t.equal(progress.body.next_window_at, '2026-12-07T09:00:00.000Z', 'next Monday 09:00 in London')
  await c.gw.request('POST', `/v1/campaigns/${id}/cancel`, { key: tenant.apiKey })
})
