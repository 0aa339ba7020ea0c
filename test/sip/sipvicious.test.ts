/**
 * The scanners attackers use, against a real gateway: Debian's sipvicious, unchanged. The trunk allows
 * 127.0.0.1 and asks for a password, and two numbers in the scanned range are routed to it.
 *
 * svwar decides a number exists by comparing first lines (svwar.py, TakeASip.start and getResponse): it first
 * dials a random number and keeps that answer's status line as the "bad user" one; any later 401, 403 or 407
 * whose status line differs is an extension that "requires authentication", and a 200 one that needs none.
 * Without --force it gives up when the random number is already challenged. So it lists no number exactly when
 * every number gets the same status line, which is what "challenge first, look up after" gives.
 *
 * svcrack answers each challenge with the next word of its list and reports the password when a 200 comes; with
 * --reusenonce it answers one nonce over and over, counting nc up. The right password is the 7th word: the
 * lockout blocks the source at the 5th wrong one, so the right one gets 403 like the rest.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import t from 'tap'
import { newTenant } from '../carrier-e2e/carrier-setup.js'
import { toolSkip } from '../helpers/tool-required.js'
import { runSipvicious, sipviciousMissing } from '../helpers/sipvicious.js'
import { addTrunk, startSipWorld } from './sip-setup.js'

const PASSWORD = 'Tr0mb0ne-Quiet-42'
/** The numbers routed in the scanned range: svwar's `-T 1415555%04i -e 100-120` dials +14155550100..+14155550120. */
const ROUTED = ['+14155550105', '+14155550112']

const { c, sipPort, ...world } = await startSipWorld(t)
const tenant = await newTenant(c)
for (const number of ROUTED) {
  const reserved = await c.gw.request('PUT', `/admin/v1/organizations/${tenant.orgId}/phone_numbers/${encodeURIComponent(number)}`, {
    admin: true,
  })
  if (reserved.status !== 201) throw new Error(reserved.text)
  const assigned = await c.gw.request('POST', `/v1/agents/${tenant.agentId}/phone_numbers`, {
    key: tenant.apiKey,
    body: { phone_number: number },
  })
  if (assigned.status !== 201) throw new Error(assigned.text)
}
await addTrunk({ c, ...world }, tenant.apiKey, { allowed_cidrs: ['127.0.0.1/32'], username: 'pbx', password: PASSWORD })
const dir = mkdtempSync(join(tmpdir(), 'voxgate-sipvicious-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

// The scanners' own port, a fresh one each run so no answer to the run before reaches the next: their Via carries
// it (port 0 would be a bad Via); taken, they try the next one.
let localPort = 20_000 + 100 * Math.floor(Math.random() * 300)
function target(): string[] {
  localPort += 7
  return ['-p', String(sipPort), '-P', String(localPort), '-x', '127.0.0.1', '127.0.0.1']
}
const UA = 'Grandstream GXP2170 1.0.11.3'

async function metric(pattern: RegExp): Promise<number> {
  const text = (await c.gw.request('GET', '/metrics', { key: null })).text
  return Number(pattern.exec(text)?.[1] ?? 0)
}

/**
 * The numbers svwar found: those it logged as found as it went (`-v`: "extension 'N' exists", with or without
 * authentication, or "probably exists") and those of the table it prints at the end.
 */
function listed(run: { stdout: string; stderr: string }): string[] {
  const logged = [...run.stderr.matchAll(/extension '(\d+)' (?:exists|probably exists)/g)].map((m) => m[1] as string)
  const table = [...run.stdout.matchAll(/\b(1415555\d{4})\b/g)].map((m) => m[1] as string)
  return [...new Set([...logged, ...table])]
}

t.test('svwar lists no number, with its own User-Agent or another, forced or not', { skip: toolSkip(sipviciousMissing) }, async (t) => {
  const scan = () => ['-m', 'INVITE', '-e', '100-120', '-T', '1415555%04i', '-t', '0.15', '-v', ...target()]
  const scannerDrops = () => metric(/voxgate_sip_dropped_total\{reason="scanner"\} (\d+)/)
  const before = await scannerDrops()
  const stock = await runSipvicious('svwar', scan())
  t.same(listed(stock), [], 'stock User-Agent: nothing listed')
  t.match(stock.stderr, /timed out|No server response/, `its requests were dropped unanswered\n${stock.stderr}`)
  t.ok((await scannerDrops()) > before, 'counted as scanner drops')

  const plain = await runSipvicious('svwar', scan(), { userAgent: UA, timeoutMs: 90_000 })
  t.notOk(plain.timedOut, 'svwar ended by itself')
  t.same(listed(plain), [], `another User-Agent: nothing listed\n${plain.stdout}\n${plain.stderr}`)
  t.match(plain.stderr, /authentication request for an unknown extension/, 'svwar saw a random number challenged too, and gave up')

  const forced = await runSipvicious('svwar', ['--force', ...scan()], { userAgent: UA, timeoutMs: 90_000 })
  t.notOk(forced.timedOut, 'svwar ended by itself')
  t.same(listed(forced), [], `--force: nothing listed\n${forced.stderr}`)
  t.match(forced.stderr, /found nothing/)
  t.equal(await metric(/voxgate_sip_auth_blocks_total (\d+)/), 0, 'asking for numbers without credentials is no failure')
})

t.test(
  'svcrack does not find the password: the source is blocked before the 7th word',
  { skip: toolSkip(sipviciousMissing) },
  async (t) => {
    const words = ['123456', 'password', 'pbx', 'admin', 'letmein', 'secret', PASSWORD, 'qwerty', '1234', 'voxgate']
    const wordlist = join(dir, 'words.txt')
    writeFileSync(wordlist, `${words.join('\n')}\n`)
    const crack = ['-u', 'pbx', '-e', ROUTED[0]!.slice(1), '-m', 'INVITE', '-d', wordlist, '-t', '0.15', '-vv']

    const stock = await runSipvicious('svcrack', [...crack, ...target()], { timeoutMs: 4_000 })
    t.notMatch(stock.stderr, /The password for/, 'stock User-Agent: dropped, nothing found')

    const asIs = await runSipvicious('svcrack', [...crack, ...target()], { userAgent: UA, timeoutMs: 20_000 })
    t.match(asIs.stderr, /UnboundLocalError|Unknown algorithm/, 'as shipped, svcrack cannot answer a SHA-256 challenge (offered first)')
    t.notMatch(asIs.stderr, /The password for/)

    const run = await runSipvicious('svcrack', [...crack, ...target()], {
      userAgent: UA,
      md5Challenge: true,
      stopWhen: /no more passwords/,
      timeoutMs: 30_000,
    })
    t.notMatch(run.stderr, /The password for/, `no password found\n${run.stderr}`)
    t.match(run.stderr, new RegExp(`trying ${PASSWORD}`), 'svcrack did send the right password')
    t.match(run.stderr, /no more passwords/, 'and went through its whole list')
    t.equal(await metric(/voxgate_sip_auth_blocks_total (\d+)/), 1, 'the source was blocked once')
    t.ok((await metric(/voxgate_sip_auth_failures_total\{reason="bad_response"\} (\d+)/)) >= 5, 'five wrong answers counted')
    t.ok(
      (await metric(/voxgate_session_refusals_total\{channel="sip",reason="auth_blocked"\} (\d+)/)) >= 1,
      'what came after, the right password included, was refused as blocked',
    )
    const sessions = await c.gw.store.db.selectFrom('sessions').select('id').where('organization_id', '=', tenant.orgId).execute()
    t.equal(sessions.length, 0, 'no call was let through')
  },
)
