/**
 * The SIP transaction edge cases as sipp plays them (Debian's sip-tester, standard scenario files in
 * fixtures/sipp/): an INVITE retransmitted before its answer makes one call, not two; a BYE before the ACK is
 * answered and ends the call; hold and unhold by re-INVITE get recvonly and sendrecv answers. Each against a real
 * gateway with SIP on and a trunk for sipp's address; sipp exits 0 only when every message of its scenario came as
 * written. (CANCEL before the answer races the admission, which answers within a turn of the event loop here:
 * sip-call-uas.test.ts holds the admission to test it.)
 */
import { rmSync } from 'node:fs'
import { toolSkip } from '../helpers/tool-required.js'
import t, { type Test } from 'tap'
import { eventually, newBackendTenant, sse } from '../carrier-e2e/carrier-setup.js'
import { freePort } from '../helpers/nginx.js'
import { readSippStats, runSipp, sippMissing, sippRunFolder, sippScenario, type SippRun } from '../helpers/sipp.js'

const skip = toolSkip(sippMissing)
import { addTrunk, startSipWorld } from './sip-setup.js'

const world = await startSipWorld(t)
const { c, sipPort } = world
const { tenant, backend } = await newBackendTenant(t, c, 'sipp-token')
backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello from the SIP line.' : 'Noted.')
await addTrunk(world, tenant.apiKey, { allowed_cidrs: ['127.0.0.1/32'] }, 'sipp')

/**
 * Plays `scenario` against the gateway (once, unless `extra` says otherwise); resolves with sipp's exit code and the
 * end of what it printed.
 */
async function sipp(scenario: string, extra: string[] = [], cwd?: string): Promise<SippRun> {
  const mediaPort = await freePort()
  const args = [
    '-sf',
    sippScenario(scenario),
    '-s',
    tenant.number,
    '-i',
    '127.0.0.1',
    '-p',
    '0',
    '-mi',
    '127.0.0.1',
    '-mp',
    String(mediaPort),
  ]
  args.push(...(extra.includes('-m') ? extra : ['-m', '1', ...extra]))
  args.push('-timeout', '15', '-timeout_error', '-nostdin', '-recv_timeout', '5000', `127.0.0.1:${sipPort}`)
  return runSipp(args, { cwd, timeoutMs: 20_000 })
}

async function sessions() {
  return c.gw.store.db.selectFrom('sessions').selectAll().where('organization_id', '=', tenant.orgId).orderBy('created_at').execute()
}

/** Runs `scenario` and returns the sessions it made, once they have ended. */
async function play(t: Test, scenario: string, extra: string[] = [], cwd?: string) {
  const before = (await sessions()).length
  const run = await sipp(scenario, extra, cwd)
  t.equal(run.code, 0, `sipp played ${scenario} as written${run.code === 0 ? '' : `:\n${run.output}`}`)
  const made = await eventually(
    async () => {
      const rows = (await sessions()).slice(before)
      return rows.length > 0 && rows.every((r) => r.status === 'ended') ? rows : undefined
    },
    5_000,
    `the sessions of ${scenario} to end`,
  )
  await eventually(async () => (c.gw.gateway.sip?.liveCalls === 0 ? true : undefined), 5_000, 'no SIP call left')
  return made
}

t.test('an INVITE retransmitted before its answer makes one call', { skip }, async (t) => {
  const made = await play(t, 'invite-retransmit')
  t.equal(made.length, 1, 'one session for the two copies of the INVITE')
  t.equal(made[0]?.end_reason, 'caller_hangup')
})

t.test('a BYE before the ACK is answered and ends the call', { skip }, async (t) => {
  const made = await play(t, 'bye-before-ack')
  t.equal(made.length, 1)
  t.equal(made[0]?.end_reason, 'caller_hangup')
})

t.test('hold and unhold by re-INVITE: recvonly, then sendrecv answers; the call goes on to its BYE', { skip }, async (t) => {
  const made = await play(t, 'reinvite-hold')
  t.equal(made.length, 1)
  t.equal(made[0]?.channel, 'sip')
  t.equal(made[0]?.end_reason, 'caller_hangup')
})

t.test('five concurrent callers talk over RTP: every call passes, and the gateway hears them', { skip }, async (t) => {
  const { dir, statsFile } = sippRunFolder()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const sttBefore = world.deepgram.connections.length
  // Five at once, each talking (the phrase in a loop) for 3 s before its BYE.
  const made = await play(t, 'uac-rtp', ['-m', '5', '-l', '5', '-r', '5', '-d', '3000', '-trace_stat', '-stf', statsFile], dir)
  t.equal(made.length, 5, 'five sessions')
  t.ok(
    made.every((s) => s.channel === 'sip' && s.end_reason === 'caller_hangup'),
    'each a SIP call the caller hung up',
  )
  t.same(readSippStats(statsFile), { created: 5, successful: 5, failed: 0 }, "sipp's own statistics: 5 calls, 0 failed")
  const stt = world.deepgram.connections.slice(sttBefore)
  t.equal(stt.length, 5, 'a speech-to-text stream per call')
  t.ok(
    stt.every((s) => s.voicedBetween(0, s.receivedSeconds) !== undefined),
    "each stream got the caller's voice (sipp's RTP, through the jitter buffer and VAD)",
  )
})
