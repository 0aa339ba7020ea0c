/**
 * Who may claim a phone number (POST /v1/agents/{agent_id}/phone_numbers): an organization whose carrier account
 * owns it (the gateway asks the carrier's IncomingPhoneNumbers, here the fake carrier), or one the operator
 * reserved it for (PUT /admin/v1/organizations/{id}/phone_numbers/{number}). Any other number is one 404, the
 * same body whether the number is free or another tenant's; a carrier that fails is a 502 that echoes nothing.
 */
import t from 'tap'
import { startTestGateway } from '../helpers/gateway.js'
import { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'
import { TwilioNumbersClient } from '../../carrier/twilio/numbers-client.js'
import { CarrierApiError } from '../../carrier/carrier.js'

const gw = await startTestGateway()
t.teardown(() => gw.close())
const carrierApi = await FakeCallsApi.start()
t.teardown(() => carrierApi.close())

async function newOrg(name: string, withCarrier = false): Promise<{ id: string; key: string; agent: string }> {
  const org = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name } })
  if (withCarrier) {
    const r = await gw.request('PUT', `/admin/v1/organizations/${org.body.id}/carrier`, {
      admin: true,
      body: { account_sid: carrierApi.accountSid, auth_token: carrierApi.authToken, api_base_url: carrierApi.baseUrl },
    })
    if (r.status !== 200) throw new Error(r.text)
  }
  const agent = await gw.request('POST', '/v1/agents', { key: org.body.api_key, body: {} })
  return { id: org.body.id, key: org.body.api_key, agent: agent.body.id }
}
function claim(org: { key: string; agent: string }, number: string, extra: Record<string, string> = {}) {
  return gw.request('POST', `/v1/agents/${org.agent}/phone_numbers`, { key: org.key, body: { phone_number: number, ...extra } })
}
function reserve(orgId: string, number: string, body?: unknown) {
  return gw.request('PUT', `/admin/v1/organizations/${orgId}/phone_numbers/${encodeURIComponent(number)}`, { admin: true, body })
}
async function numbersOf(org: { key: string; agent: string }): Promise<string[]> {
  const g = await gw.request('GET', `/v1/agents/${org.agent}`, { key: org.key })
  return g.body.assigned_phone_numbers.map((n: { phone_number: string }) => n.phone_number)
}

t.test('a number neither reserved nor owned: one 404 whether it is free or another organization holds it', async (t) => {
  const holder = await newOrg('holder')
  const asker = await newOrg('asker')
  t.equal((await reserve(holder.id, '+14155550111')).status, 201)
  t.equal((await claim(holder, '+14155550111')).status, 201, 'the holder claims its reserved number')

  const held = await claim(asker, '+14155550111')
  const free = await claim(asker, '+14155550112')
  t.equal(held.status, 404)
  t.equal(held.body.code, 'phone_number_not_available')
  t.match(held.body.error, /PUT \/admin\/v1\/organizations\/\{id\}\/phone_numbers\/\{phone_number\}/, 'says how a number becomes claimable')
  t.match(held.body.error, /carrier account owns it/)
  t.same(held.body, free.body, 'the same answer for a held number and a free one')
  t.same(await numbersOf(holder), ['+14155550111'], 'the holder keeps it')
})

t.test('reserved numbers: claim, list, move only when the operator says so, release', async (t) => {
  const a = await newOrg('reserve-a')
  const b = await newOrg('reserve-b')
  const first = await reserve(a.id, '+1 415 555 0121')
  t.equal(first.status, 201)
  t.match(first.body, { phone_number: '+14155550121', agent_id: null })
  t.equal((await reserve(a.id, '+14155550121')).status, 200, 'reserving again: 200')
  t.equal((await claim(a, '+14155550121')).status, 201)
  const listed = await gw.request('GET', `/admin/v1/organizations/${a.id}/phone_numbers`, { admin: true })
  t.match(listed.body.phone_numbers, [{ phone_number: '+14155550121', agent_id: a.agent }])
  t.ok(listed.body.phone_numbers[0].reserved_at)

  // Another organization: refused while A has it, unless the operator moves it.
  const refused = await reserve(b.id, '+14155550121')
  t.equal(refused.status, 409)
  t.equal(refused.body.code, 'phone_number_reserved_elsewhere')
  t.equal((await claim(b, '+14155550121')).status, 404, 'B cannot claim what is reserved for A')
  const moved = await reserve(b.id, '+14155550121', { move: true })
  t.equal(moved.status, 201)
  t.same(await numbersOf(a), [], "A's agent no longer has it")
  t.equal((await claim(a, '+14155550121')).status, 404, 'nor can A claim it back')
  t.equal((await claim(b, '+14155550121')).status, 201, 'B claims it')

  // Release: the reservation and B's assignment end; the number is claimable by no one again.
  const del = (id: string) =>
    gw.request('DELETE', `/admin/v1/organizations/${id}/phone_numbers/${encodeURIComponent('+14155550121')}`, { admin: true })
  t.equal((await del(a.id)).status, 404, 'A has no reservation to release')
  t.equal((await del(b.id)).status, 204)
  t.same(await numbersOf(b), [])
  t.equal((await claim(b, '+14155550121')).status, 404)
  t.equal((await reserve('org_missing', '+14155550121')).status, 404, 'an unknown organization')
  t.equal((await reserve(a.id, '12345')).status, 400, 'not a number')
})

t.test("the carrier path: a number the organization's carrier account owns", async (t) => {
  const org = await newOrg('carrier-owner', true)
  const sid = carrierApi.ownNumber('+14155550131', 'Front desk')
  const before = carrierApi.requests.length
  const r = await claim(org, '+14155550131')
  t.equal(r.status, 201)
  t.match(r.body, { phone_number: '+14155550131', carrier_sid: sid, friendly_name: 'Front desk' }, 'filled from the carrier')
  const asked = carrierApi.requests.slice(before)
  t.equal(asked.length, 1)
  t.equal(asked[0]?.method, 'GET')
  t.equal(asked[0]?.path, `/2010-04-01/Accounts/${carrierApi.accountSid}/IncomingPhoneNumbers.json`)
  t.equal(new URLSearchParams(asked[0]?.query).get('PhoneNumber'), '+14155550131')

  carrierApi.ownNumber('+14155550132')
  const given = await claim(org, '+14155550132', { carrier_sid: 'PNmine', friendly_name: 'Mine' })
  t.match(given.body, { carrier_sid: 'PNmine', friendly_name: 'Mine' }, 'what the request gives is kept')
  const notOwned = await claim(org, '+14155550133')
  t.equal(notOwned.status, 404, 'a number the account does not own')
  t.equal(notOwned.body.code, 'phone_number_not_available')

  // Owned by the account, yet reserved for another organization or held by one: the same 404.
  const other = await newOrg('carrier-other')
  carrierApi.ownNumber('+14155550134')
  t.equal((await reserve(other.id, '+14155550134')).status, 201)
  const reservedElsewhere = await claim(org, '+14155550134')
  carrierApi.ownNumber('+14155550135')
  t.equal((await reserve(other.id, '+14155550135')).status, 201)
  t.equal((await claim(other, '+14155550135')).status, 201)
  const heldElsewhere = await claim(org, '+14155550135')
  t.same([reservedElsewhere.status, heldElsewhere.status], [404, 404])
  t.same(reservedElsewhere.body, notOwned.body)
  t.same(heldElsewhere.body, notOwned.body)
})

t.test('a carrier that fails: 502 with a fixed message, nothing of its answer echoed', async (t) => {
  const org = await newOrg('carrier-failing', true)
  carrierApi.ownNumber('+14155550141')
  carrierApi.failNext({ status: 500, code: 20500, message: `internal trouble for ${carrierApi.accountSid}` })
  const r = await claim(org, '+14155550141')
  t.equal(r.status, 502)
  t.equal(r.body.code, 'carrier_lookup_failed')
  t.notMatch(r.text, carrierApi.accountSid, 'no carrier text')
  t.notMatch(r.text, /internal trouble/)
  carrierApi.failNext({ status: 401, code: 20003, message: 'Authenticate' })
  const auth = await claim(org, '+14155550141')
  t.same([auth.status, auth.body], [502, r.body], 'refused credentials: the same fixed answer')
  t.same(await gw.request('GET', `/v1/agents/${org.agent}`, { key: org.key }).then((g) => g.body.assigned_phone_numbers), [])
})

t.test('the numbers client gives up at its timeout, and checks the number the carrier listed', async (t) => {
  const credentials = { accountSid: carrierApi.accountSid, authToken: carrierApi.authToken, apiBaseUrl: carrierApi.baseUrl }
  carrierApi.failNext({ delayMs: 1_000 })
  const slow = new TwilioNumbersClient(credentials, { requestTimeoutMs: 50 })
  const timedOut = await slow.findIncomingNumber('+14155550151').catch((e: unknown) => e)
  t.ok(timedOut instanceof CarrierApiError, 'a carrier error')
  t.equal((timedOut as CarrierApiError).code, 'carrier_timeout')
  const aborted = new AbortController()
  aborted.abort(new Error('the client went away'))
  await t.rejects(new TwilioNumbersClient(credentials).findIncomingNumber('+14155550151', { signal: aborted.signal }), /went away/)
  // Twilio's filter matches part of a number: a listed number that is not the one asked for is not it.
  carrierApi.ownNumber('+441415555015')
  t.equal(await new TwilioNumbersClient(credentials).findIncomingNumber('+14155550151'), undefined)
})
