/**
 * Blind transfer of a SIP call by REFER (RFC 3515), with sipp as the transferee (fixtures/sipp/refer-*.xml): its
 * INVITE lists REFER in Allow; the agent's `response.transfer` becomes a REFER in the dialog. Accepted and
 * completed (202, NOTIFY 100 Trying, NOTIFY 200 OK): the gateway answers each NOTIFY, sends BYE, and the session
 * ends `transferred`. Declined (603), or accepted with a failing target (NOTIFY 503): the call goes on, the agent
 * gets `transfer_failed` and hangs up, which sipp sees as the gateway's BYE. sipp exits 0 only when every message
 * of its scenario came as written (the Refer-To and Referred-By checked in the scenario). A peer whose INVITE
 * does not list REFER (the test phone) gets no REFER: the gateway bridges the transfer itself, which here (a trunk
 * with no outbound URI) fails `failed` and the backend hears `transfer.failed` (the bridge itself:
 * sip-warm-transfer.test.ts).
 */
import { execFile } from 'node:child_process'
import { sippMissing } from '../helpers/sipp.js'
import { toolSkip } from '../helpers/tool-required.js'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import type { BackendReply } from '../fakes/backend/fake-backend.js'
import { eventually, newBackendTenant, sse } from '../carrier-e2e/carrier-setup.js'
import { freePort } from '../helpers/nginx.js'
import { SipCaller } from '../helpers/sip-caller.js'
import { getHeader } from '../../transports/sip/message/sip-message.js'
import { addTrunk, startSipWorld } from './sip-setup.js'

const skip = toolSkip(sippMissing)

const world = await startSipWorld(t)
const { c, sipPort } = world
const { tenant, backend } = await newBackendTenant(t, c, 'sipp-refer-token')
await addTrunk(world, tenant.apiKey, { allowed_cidrs: ['127.0.0.1/32'] }, 'sipp')

/**
 * The welcome transfers the caller with `fields`; a `transfer_failed` data event (REFER) or a `transfer.failed`
 * request (the gateway's bridge) is answered with a hang-up.
 */
function transferring(fields: Record<string, unknown>): void {
  backend.reply = (req): BackendReply => {
    const turnId = req.json.turn_id
    if (req.json.type === 'session.start')
      return { kind: 'sse', steps: [{ data: { type: 'response.transfer', turn_id: turnId, ...fields } }] }
    if ((req.json.type === 'data' && req.json.data?.transfer_failed !== undefined) || req.json.type === 'transfer.failed') {
      return { kind: 'sse', steps: [{ data: { type: 'response.hangup', turn_id: turnId, content: 'Goodbye.' } }] }
    }
    return sse(turnId, 'ok')
  }
}

/** Plays `scenario` once against the gateway; resolves with sipp's exit code and the end of what it printed. */
async function sipp(scenario: string): Promise<{ code: number; output: string }> {
  const file = fileURLToPath(new URL(`./fixtures/sipp/${scenario}.xml`, import.meta.url))
  const mediaPort = await freePort()
  const args = ['-sf', file, '-s', tenant.number, '-m', '1', '-i', '127.0.0.1', '-p', '0', '-mi', '127.0.0.1', '-mp', String(mediaPort)]
  args.push('-timeout', '20', '-timeout_error', '-nostdin', '-recv_timeout', '10000', `127.0.0.1:${sipPort}`)
  return new Promise((resolve) => {
    execFile('sipp', args, { timeout: 25_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1
      resolve({ code, output: `${stdout}\n${stderr}`.slice(-3000) })
    })
  })
}

async function sessions() {
  return c.gw.store.db.selectFrom('sessions').selectAll().where('organization_id', '=', tenant.orgId).orderBy('created_at').execute()
}

/** Runs `scenario` and returns the one session it made, once ended. */
async function play(t: Test, scenario: string) {
  const before = (await sessions()).length
  const run = await sipp(scenario)
  t.equal(run.code, 0, `sipp played ${scenario} as written${run.code === 0 ? '' : `:\n${run.output}`}`)
  const made = await eventually(
    async () => {
      const rows = (await sessions()).slice(before)
      return rows.length > 0 && rows.every((r) => r.status === 'ended') ? rows : undefined
    },
    5_000,
    `the session of ${scenario} to end`,
  )
  await eventually(async () => (c.gw.gateway.sip?.liveCalls === 0 ? true : undefined), 5_000, 'no SIP call left')
  t.equal(made.length, 1)
  return made[0]!
}

t.test('REFER accepted, NOTIFY 100 then 200: our BYE, the session ends transferred', { skip }, async (t) => {
  transferring({ to: 'sip:queue@cc.example.com', headers: { 'X-Ticket': 'T-42' }, content: 'Connecting you.' })
  const row = await play(t, 'refer-transfer')
  t.equal(row.end_reason, 'transferred')
  t.equal(row.transferred_to, 'sip:queue@cc.example.com', 'stored without the headers, as on the carrier path')
})

for (const [scenario, to, error] of [
  ['refer-declined', '+14155550100', 'the SIP peer refused the REFER (603)'],
  ['refer-target-busy', 'sip:queue@cc.example.com', 'the transfer target answered 503'],
] as const) {
  t.test(`${scenario}: the call goes on, the agent gets transfer_failed (and hangs up)`, { skip }, async (t) => {
    const requests = backend.requests.length
    transferring(to.startsWith('sip:') ? { to, headers: { 'X-Ticket': 'T-42' } } : { to })
    const row = await play(t, scenario)
    const failed = backend.requests.slice(requests).find((r) => r.json.type === 'data' && r.json.data?.transfer_failed !== undefined)
    t.same(failed?.json.data, { transfer_failed: { to, error, code: 'transfer_failed' } }, 'the agent hears why')
    t.equal(row.end_reason, 'hangup', "the call went on until the agent's hang-up")
    t.equal(row.transferred_to, null)
    const transcript = await c.gw.store.db.selectFrom('transcript_entries').selectAll().where('session_id', '=', row.id).execute()
    t.ok(
      transcript.some((e) => e.assistant_message === 'I am sorry, I could not transfer your call.'),
      'the caller heard the apology',
    )
  })
}

t.test('a peer that did not list REFER in Allow gets no REFER: the gateway bridges (no outbound trunk here: failed)', async (t) => {
  const requests = backend.requests.length
  transferring({ to: '+14155550100' })
  const p = await SipCaller.open({ host: '127.0.0.1', port: sipPort })
  t.teardown(() => p.close())
  p.invite(tenant.number)
  const ok = await p.final()
  t.equal(ok.status, 200)
  p.ack(ok)
  const bye = await p.byes.next(10_000, "the agent's hang-up after transfer.failed")
  t.equal(getHeader(bye, 'Call-ID'), p.callId)
  const asked = backend.requests.slice(requests)
  t.match(
    asked.find((r) => r.json.type === 'transfer.failed'),
    { json: { type: 'transfer.failed', reason: 'failed', to: '+14155550100' } },
  )
  t.notOk(
    asked.some((r) => r.json.type === 'data' && r.json.data?.transfer_failed !== undefined),
    'no cold transfer_failed: the bridge took it',
  )
  const row = await eventually(async () => (await sessions()).slice(-1).find((r) => r.status === 'ended'))
  t.equal(row.end_reason, 'hangup')
})
