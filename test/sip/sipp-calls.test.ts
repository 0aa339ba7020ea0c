/**
 * The transaction edge cases of issue 27 as sipp plays them (Debian's sip-tester, standard scenario files in
 * fixtures/sipp/): an INVITE retransmitted before its answer makes one call, not two; a BYE before the ACK is
 * answered and ends the call; hold and unhold by re-INVITE get recvonly and sendrecv answers. Each against a real
 * gateway with SIP on and a trunk for sipp's address; sipp exits 0 only when every message of its scenario came as
 * written. (CANCEL before the answer races the admission, which answers within a turn of the event loop here:
 * sip-call-uas.test.ts holds the admission to test it.)
 */
import { execFile, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { eventually, newBackendTenant, sse } from '../carrier-e2e/carrier-setup.js'
import { freePort } from '../helpers/nginx.js'
import { addTrunk, startSipWorld } from './sip-setup.js'

const skip =
  spawnSync('sipp', ['-v']).error === undefined ? false : 'sipp is not installed (apt-get install sip-tester; .ci/run installs it)'

const world = await startSipWorld(t)
const { c, sipPort } = world
const { tenant, backend } = await newBackendTenant(t, c, 'sipp-token')
backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello from the SIP line.' : 'Noted.')
await addTrunk(world, tenant.apiKey, { allowed_cidrs: ['127.0.0.1/32'] }, 'sipp')

/** Plays `scenario` once against the gateway; resolves with sipp's exit code and the end of what it printed. */
async function sipp(scenario: string): Promise<{ code: number; output: string }> {
  const file = fileURLToPath(new URL(`./fixtures/sipp/${scenario}.xml`, import.meta.url))
  const mediaPort = await freePort()
  const args = ['-sf', file, '-s', tenant.number, '-m', '1', '-i', '127.0.0.1', '-p', '0', '-mi', '127.0.0.1', '-mp', String(mediaPort)]
  args.push('-timeout', '15', '-timeout_error', '-nostdin', '-recv_timeout', '5000', `127.0.0.1:${sipPort}`)
  return new Promise((resolve) => {
    execFile('sipp', args, { timeout: 20_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1
      resolve({ code, output: `${stdout}\n${stderr}`.slice(-3000) })
    })
  })
}

async function sessions() {
  return c.gw.store.db.selectFrom('sessions').selectAll().where('organization_id', '=', tenant.orgId).orderBy('created_at').execute()
}

/** Runs `scenario` and returns the sessions it made, once they have ended. */
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
