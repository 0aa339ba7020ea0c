/**
 * The lockout of password guessers (gateway/admission/sip-auth-lockout.ts) on a real store and an injected clock: the budget
 * of 5 failures a minute, blocks that double up to the cap, a success that resets, the block seen by a second
 * replica on the same database, one log line per block, and what is not counted.
 */
import t from 'tap'
import { createLogger } from '../../core/log.js'
import { afterFailure, DEFAULT_LOCKOUT_POLICY, SipAuthLockout, sourceKey } from '../../gateway/admission/sip-auth-lockout.js'
import { testDb } from '../helpers/db.js'

const db = await testDb()
t.teardown(() => db.cleanup())

function replica(clock: { now: number }) {
  const lines: Record<string, unknown>[] = []
  const log = createLogger('info', {}, { write: (line: string) => void lines.push(JSON.parse(line)) })
  const counted = { failed: [] as string[], blocked: 0 }
  const lockout = new SipAuthLockout({
    db: db.store.db,
    log,
    now: () => clock.now,
    metrics: { failed: (r) => void counted.failed.push(r), blocked: () => void counted.blocked++ },
  })
  return { lockout, lines, counted }
}

t.test('the policy: 5 failures in a minute block for 1 minute, then 2, 4 ... up to an hour', async (t) => {
  const p = DEFAULT_LOCKOUT_POLICY
  let state = afterFailure(undefined, 0, p)
  for (let i = 2; i <= 4; i++) state = afterFailure(state, i, p)
  t.equal(state.blockedUntil, null, 'four failures: not blocked')
  state = afterFailure(state, 5, p)
  t.same([state.blockedUntil, state.strikes], [5 + 60_000, 1], 'the fifth blocks for a minute')
  const blocks: number[] = []
  let now = 5
  for (let strike = 2; strike <= 9; strike++) {
    now = (state.blockedUntil as number) + 1
    for (let i = 0; i < 5; i++) state = afterFailure(state, now, p)
    blocks.push(((state.blockedUntil as number) - now) / 60_000)
  }
  t.same(blocks, [2, 4, 8, 16, 32, 60, 60, 60], 'each block twice the one before, capped at an hour')

  // A slow guesser: the credit refills at 5 a minute, so one failure every 12 s is never blocked.
  let slow = afterFailure(undefined, 0, p)
  for (let i = 1; i <= 20; i++) slow = afterFailure(slow, i * 12_000, p)
  t.equal(slow.blockedUntil, null, 'one failure per 12 s: within the budget')
})

t.test('a source is blocked past its budget, refused without the store, and logged once', async (t) => {
  const clock = { now: 1_700_000_000_000 }
  const { lockout, lines, counted } = replica(clock)
  const source = '198.51.100.20'
  for (let i = 1; i <= 4; i++) {
    t.equal(await lockout.failed(source, 'sip_trunk_a', 'bad_response'), false, `failure ${i}: within the budget`)
    clock.now += 1_000
  }
  t.notOk(lockout.isBlocked(source))
  t.equal(await lockout.failed(source, 'sip_trunk_a', 'bad_response'), true, 'the fifth failure in a minute blocks')
  t.ok(lockout.isBlocked(source), 'known to this replica without a round trip')
  t.ok(await lockout.blocked(source))
  t.equal(counted.blocked, 1)
  t.same(counted.failed, Array(5).fill('bad_response'))
  const blockedLines = lines.filter((l) => l.msg === 'SIP source blocked after failed digest answers')
  t.equal(blockedLines.length, 1, 'one log line for the block')
  t.match(blockedLines[0], { source, trunk_id: 'sip_trunk_a', blocked_s: 60, blocks: 1 })
  t.notMatch(JSON.stringify(lines), /password|hunter2/, 'never a password')

  // A second replica on the same database: it reads the block from the store once, then knows it.
  const other = replica(clock)
  t.notOk(other.lockout.isBlocked(source), 'not known before it asks the store')
  t.ok(await other.lockout.blocked(source), 'the store says blocked: the budget is shared')
  t.ok(other.lockout.isBlocked(source))

  clock.now += 60_001
  t.notOk(lockout.isBlocked(source), 'the block ends')
  t.notOk(await other.lockout.blocked(source))
  for (let i = 0; i < 4; i++) await lockout.failed(source, 'sip_trunk_a', 'bad_response')
  t.ok(await lockout.failed(source, 'sip_trunk_a', 'bad_response'), 'five more failures block again')
  const second = lines.filter((l) => l.msg === 'SIP source blocked after failed digest answers').at(-1)
  t.match(second, { blocked_s: 120, blocks: 2 }, 'twice as long')
})

t.test('failures on two replicas count into one budget', async (t) => {
  const clock = { now: 1_700_000_000_000 }
  const [a, b] = [replica(clock), replica(clock)]
  const source = '198.51.100.21'
  await Promise.all([a, b, a, b].map((r) => r.lockout.failed(source, 'sip_trunk_a', 'bad_response')))
  t.ok(await b.lockout.failed(source, 'sip_trunk_a', 'bad_response'), 'the fifth, on either replica, blocks')
  t.ok(await a.lockout.blocked(source))
})

t.test('the right password resets that trunk, not another; what tested no password is not counted', async (t) => {
  const clock = { now: 1_700_000_000_000 }
  const { lockout, counted } = replica(clock)
  const source = '198.51.100.22'
  for (let i = 0; i < 4; i++) await lockout.failed(source, 'sip_trunk_a', 'bad_response')
  await lockout.succeeded(source, 'sip_trunk_a')
  for (let i = 0; i < 4; i++) t.notOk(await lockout.failed(source, 'sip_trunk_a', 'bad_response'), 'a fresh budget after a success')

  // Four wrong guesses at trunk b, a success on trunk a (the guesser's own), four more at b: still blocked at the fifth.
  for (let i = 0; i < 4; i++) await lockout.failed(source, 'sip_trunk_b', 'unknown_user')
  await lockout.succeeded(source, 'sip_trunk_a')
  t.ok(await lockout.failed(source, 'sip_trunk_b', 'bad_response'), "another trunk's success does not reset it")

  const spoofed = '198.51.100.23'
  for (const reason of ['bad_nonce', 'malformed', 'realm', 'uri', 'replayed', 'stale_nonce'] as const) {
    for (let i = 0; i < 5; i++) t.notOk(await lockout.failed(spoofed, 'sip_trunk_a', reason), `${reason} is not counted`)
  }
  t.notOk(await lockout.blocked(spoofed), "garbage sent in an address's name cannot lock it out")
  t.ok(counted.failed.includes('bad_nonce'), 'but it is in the metrics')
})

t.test('sources as counted: IPv4, mapped IPv4, and an IPv6 /64', async (t) => {
  t.equal(sourceKey('198.51.100.7'), '198.51.100.7')
  t.equal(sourceKey('::ffff:198.51.100.7'), '198.51.100.7')
  t.equal(sourceKey('2001:db8:0:12:aaaa::1'), '2001:db8:0:12::/64')
  t.equal(sourceKey('2001:db8::12:1'), '2001:db8:0:0::/64')
  t.equal(sourceKey('fe80::1%eth0'), 'fe80:0:0:0::/64')
  const clock = { now: 1_700_000_000_000 }
  const { lockout } = replica(clock)
  for (let i = 1; i <= 5; i++) await lockout.failed(`2001:db8:0:99::${i}`, 'sip_trunk_a', 'bad_response')
  t.ok(lockout.isBlocked('2001:db8:0:99::77'), 'a fresh address in the same /64 is the same source')
})
