import t from 'tap'
import { eventually } from '../helpers/eventually.js'
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
