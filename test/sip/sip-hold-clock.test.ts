/**
 * A held SIP call and the duration limit: the agent allows 1 minute (`session_duration_timeout_minutes: 1`; a
 * "minute" is 3 s in this file), the peer holds the call (re-INVITE `a=sendonly`) for 2.5 s and takes it back; the
 * call outlasts the plain minute by the time held and then ends `duration_timeout`. The recording's metadata lists
 * the held span (`sip_hold`) where it was.
 */
import t from 'tap'
import { eventually, newBackendTenant, sse } from '../carrier-e2e/carrier-setup.js'
import { SipCaller } from '../helpers/sip-caller.js'
import { addTrunk, startSipWorld } from './sip-setup.js'

const MINUTE_MS = 3_000
const HOLD_MS = 2_500

const { c, sipPort, ...world } = await startSipWorld(t, {}, undefined, { minuteMs: MINUTE_MS })
const { tenant, backend } = await newBackendTenant(t, c, 'sip-hold-token', (config) => {
  config.session_duration_timeout_minutes = 1
})
backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hi.' : 'Noted.')
{
  const org = await c.gw.request('PATCH', `/admin/v1/organizations/${tenant.orgId}`, { admin: true, body: { recording_enabled: true } })
  if (org.status !== 200) throw new Error(org.text)
}
await addTrunk({ c, ...world }, tenant.apiKey, { allowed_cidrs: ['127.0.0.1'] })

t.test('a held call outlasts a 1-minute limit by its hold time; the recording lists the hold', async (t) => {
  const p = await SipCaller.open({ host: '127.0.0.1', port: sipPort }, '127.0.0.1')
  t.teardown(() => p.close())
  p.invite(tenant.number.slice(1))
  const ok = await p.final()
  t.equal(ok.status, 200)
  p.ack(ok)
  const answeredAt = Date.now()
  await new Promise((r) => setTimeout(r, 800))
  p.reinvite('sendonly')
  const held = await p.final()
  t.equal(held.status, 200, 'held')
  p.ackReinvite(held)
  await new Promise((r) => setTimeout(r, HOLD_MS))
  p.reinvite('sendrecv')
  const back = await p.final()
  p.ackReinvite(back)
  const unheldAt = Date.now()
  t.ok(unheldAt - answeredAt > MINUTE_MS, 'taken back after the plain limit would have passed')
  t.equal(p.byes.items.length, 0, 'no BYE at the plain limit: the hold does not count')
  await p.byes.next(MINUTE_MS + HOLD_MS, 'BYE at the limit plus the hold')
  const lasted = Date.now() - answeredAt
  t.ok(lasted >= MINUTE_MS + HOLD_MS - 300, `the call lasted the limit plus the hold (${lasted} ms)`)
  t.ok(lasted < MINUTE_MS + HOLD_MS + 1_500, `and not much longer (${lasted} ms)`)
  const row = await eventually(async () => {
    const s = await c.gw.store.db.selectFrom('sessions').selectAll().where('organization_id', '=', tenant.orgId).executeTakeFirst()
    return s?.status === 'ended' ? s : undefined
  })
  t.equal(row.end_reason, 'duration_timeout')
  const meta = await eventually(async () => {
    const r = await c.gw.request('GET', `/v1/agents/${tenant.agentId}/sessions/${row.id}/recording/metadata`, { key: tenant.apiKey })
    return r.status === 200 && r.body.status === 'completed' ? r.body : undefined
  }, 15_000)
  t.equal(meta.held.length, 1, 'one held span')
  const span = meta.held[0]
  t.equal(span.kind, 'sip_hold')
  t.ok(span.from_ms >= 600 && span.from_ms <= 1_600, `it starts where the peer held (${span.from_ms} ms)`)
  t.ok(Math.abs(span.to_ms - span.from_ms - HOLD_MS) < 600, `and lasts the hold (${span.to_ms - span.from_ms} ms)`)
})
