/**
 * The digest server's defences against reuse: a nonce is good only from the address it was sent to,
 * and a right answer is good once per nonce count (RFC 7616 section 3.4, RFC 2617 section 3.2.2), with the
 * table of counts bounded without ever letting a replay through.
 */
import t from 'tap'
import { authorize, DigestServer, pickChallenge } from '../../transports/sip/calls/digest-auth.js'
import { NonceCounts } from '../../transports/sip/calls/digest-nonce-counts.js'

const request = { method: 'INVITE', uri: 'sip:+15557654321@gw.example.com' }
const lookup = (u: string) => (u === 'pbx' ? { password: 'hunter2' } : undefined)

function server(now: () => number, maxTrackedNonces?: number) {
  return new DigestServer({ realm: 'voxgate', secret: Buffer.from('0123456789abcdef'), nonceTtlMs: 60_000, now, maxTrackedNonces })
}

t.test('a nonce answers only from the source it was sent to; elsewhere it tests no password', async (t) => {
  const s = server(() => 1_700_000_000_000)
  const picked = pickChallenge(s.challenges({ source: '198.51.100.7' }))!
  const right = authorize(picked, { username: 'pbx', password: 'hunter2', ...request })
  const wrong = authorize(picked, { username: 'pbx', password: 'guess', ...request })
  t.same(s.check(right, { ...request, source: '203.0.113.9' }, lookup), { ok: false, reason: 'bad_nonce' }, 'right password, other address')
  t.same(s.check(wrong, { ...request, source: '203.0.113.9' }, lookup), { ok: false, reason: 'bad_nonce' }, 'no answer about the password')
  t.same(s.check(right, { ...request, source: '198.51.100.7' }, lookup), { ok: true, username: 'pbx' })
})

t.test('a right answer is good once per nonce count: the same or a lower nc is a replay', async (t) => {
  let now = 1_700_000_000_000
  const s = server(() => now)
  const source = '198.51.100.7'
  const picked = pickChallenge(s.challenges({ source }))!
  const at = (nc: number) => authorize(picked, { username: 'pbx', password: 'hunter2', nc, cnonce: 'c0ffee', ...request })
  t.same(s.check(at(1), { ...request, source }, lookup), { ok: true, username: 'pbx' })
  t.same(s.check(at(1), { ...request, source }, lookup), { ok: false, reason: 'replayed', stale: true }, 'the same packet again')
  t.same(s.check(at(3), { ...request, source }, lookup), { ok: true, username: 'pbx' }, 'a higher count')
  t.same(s.check(at(2), { ...request, source }, lookup), { ok: false, reason: 'replayed', stale: true }, 'a lower count')
  const guess = authorize(picked, { username: 'pbx', password: 'guess', nc: 9, ...request })
  t.same(s.check(guess, { ...request, source }, lookup), { ok: false, reason: 'bad_response' }, 'a wrong password is still just wrong')
  t.same(s.check(at(4), { ...request, source }, lookup), { ok: true, username: 'pbx' }, 'and it consumed no count')
  now += 61_000
  t.same(s.check(at(5), { ...request, source }, lookup), { ok: false, reason: 'stale_nonce', stale: true }, 'past its lifetime: stale')
})

t.test('without qop a nonce is good for one request', async (t) => {
  const s = server(() => 1_700_000_000_000)
  const source = '198.51.100.7'
  const picked = { ...pickChallenge(s.challenges({ source }))!, qopAuth: false }
  const value = authorize(picked, { username: 'pbx', password: 'hunter2', ...request })
  t.same(s.check(value, { ...request, source }, lookup), { ok: true, username: 'pbx' })
  t.same(s.check(value, { ...request, source }, lookup), { ok: false, reason: 'replayed', stale: true })
})

t.test('the table of counts is bounded, and a nonce pushed out of it is refused rather than replayable', async (t) => {
  let now = 1_700_000_000_000
  const s = server(() => now, 2)
  const source = '198.51.100.7'
  const answers = [0, 1, 2].map(() => {
    now += 10
    const picked = pickChallenge(s.challenges({ source }))!
    return authorize(picked, { username: 'pbx', password: 'hunter2', ...request })
  })
  for (const a of answers) t.same(s.check(a, { ...request, source }, lookup), { ok: true, username: 'pbx' })
  t.same(s.check(answers[0], { ...request, source }, lookup), { ok: false, reason: 'replayed', stale: true }, 'pushed out: still refused')
  t.same(s.check(answers[2], { ...request, source }, lookup), { ok: false, reason: 'replayed', stale: true }, 'still held: refused')

  const counts = new NonceCounts(2)
  t.ok(counts.use('a', 100, 1, 0))
  t.ok(counts.use('b', 200, 1, 0))
  t.ok(counts.use('c', 300, 1, 0), 'a third nonce pushes the oldest out')
  t.equal(counts.size, 2)
  t.notOk(counts.use('a', 100, 2, 0), 'issued before the floor: refused even with a higher count')
  t.ok(counts.use('c', 300, 2, 250), 'expired entries are forgotten as time passes')
  t.equal(counts.size, 1)
})
