/**
 * Nothing left hanging, as sipp plays it against a real gateway (SIP_MEDIA_TIMEOUT_S=2): an RFC 2543
 * caller (no branch cookie, no tags) that never sends its ACK gets its 200 again, then a BYE by timer L (64*T1 =
 * 32 s, real time), and `session.end` comes within 35 s; a caller that streams a phrase and then vanishes is hung
 * up `media_timeout`. Each ends with its row ended, its webhook sent and no SIP call left.
 */
import { rmSync } from 'node:fs'
import t, { type Test } from 'tap'
import { newBackendTenant, sse } from '../carrier-e2e/carrier-setup.js'
import { freePort } from '../helpers/nginx.js'
import { runSipp, sippMissing, sippRunFolder, sippScenario } from '../helpers/sipp.js'
import { toolSkip } from '../helpers/tool-required.js'
import { startWebhookReceiver } from '../helpers/webhook-receiver.js'
import { eventually } from '../helpers/eventually.js'
import { addTrunk, startSipWorld } from './sip-setup.js'

const skip = toolSkip(sippMissing)
const world = await startSipWorld(t, { SIP_MEDIA_TIMEOUT_S: '2' })
const { c, sipPort } = world
const receiver = await startWebhookReceiver()
t.teardown(() => receiver.close())
const { tenant, backend } = await newBackendTenant(t, c, 'sipp-live-token', (config) => {
  config.session_webhook = { url: `${receiver.url}/lifecycle` }
})
backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello from the SIP line.' : 'Noted.')
await addTrunk(world, tenant.apiKey, { allowed_cidrs: ['127.0.0.1/32'] }, 'sipp')

/** Plays `scenario` once from a folder holding caller.wav; returns the session it made once ended, and when. */
async function play(t: Test, scenario: string, timeoutS: number) {
  const { dir } = sippRunFolder()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const mediaPort = await freePort()
  const started = Date.now()
  const args = ['-sf', sippScenario(scenario), '-s', tenant.number, '-i', '127.0.0.1', '-p', '0', '-mi', '127.0.0.1']
  args.push('-mp', String(mediaPort), '-m', '1', '-timeout', String(timeoutS), '-timeout_error', '-nostdin', `127.0.0.1:${sipPort}`)
  const run = await runSipp(args, { cwd: dir, timeoutMs: (timeoutS + 5) * 1000 })
  t.equal(run.code, 0, `sipp played ${scenario} as written${run.code === 0 ? '' : `:\n${run.output}`}`)
  const rows = await c.gw.store.db.selectFrom('sessions').selectAll().where('organization_id', '=', tenant.orgId).execute()
  const row = rows.sort((a, b) => Number(b.created_at) - Number(a.created_at))[0]
  if (row === undefined) throw new Error('no session')
  const end = await receiver.waitFor((r) => r.json?.type === 'session.end' && r.json.session_id === row.id, 10_000)
  await eventually(async () => (c.gw.gateway.sip?.liveCalls === 0 ? true : undefined), 5_000, 'no SIP call left')
  const ended = await c.gw.store.db.selectFrom('sessions').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow()
  const retransmitted = Number(/\b200 <-+\s+1\s+(\d+)/.exec(run.output)?.[1] ?? 0)
  return { row: ended, end: end.json, seconds: (Date.now() - started) / 1000, retransmitted }
}

t.test('an RFC 2543 INVITE never acknowledged: 200 resent, BYE by timer L, session.end within 35 s', { skip }, async (t) => {
  const { row, end, seconds, retransmitted } = await play(t, 'rfc2543-no-ack', 45)
  t.ok(retransmitted >= 5, `sipp got our 200 again and again while it sent no ACK (${retransmitted} copies)`)
  t.equal(row.status, 'ended')
  t.equal(row.end_reason, 'client_disconnected', 'ended as the peer going away (timer L), not by the media timeout')
  t.match(end, { type: 'session.end' })
  t.ok(seconds < 35, `session.end ${seconds.toFixed(1)} s after the INVITE (timer L is 32 s)`)
})

t.test('a caller that stops sending RTP mid-call is hung up media_timeout', { skip }, async (t) => {
  const { row, end } = await play(t, 'rtp-then-silence', 20)
  t.equal(row.status, 'ended')
  t.equal(row.end_reason, 'media_timeout')
  t.match(JSON.stringify(end), /media_timeout/, 'the session.end webhook names media_timeout')
})
