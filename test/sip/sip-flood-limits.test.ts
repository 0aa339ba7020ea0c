import t from 'tap'
import { DropLogThrottle } from '../../transports/sip/endpoint/drop-log-throttle.js'
import { isScanner } from '../../transports/sip/endpoint/scanner-user-agents.js'
import { SourceRateLimiter } from '../../transports/sip/endpoint/source-rate-limiter.js'

t.test('a token bucket per address: the burst, then the rate, and other addresses untouched', async (t) => {
  let now = 0
  const limiter = new SourceRateLimiter({ ratePerSecond: 20, burst: 40 }, () => now)
  const taken = (address: string, n: number) => Array.from({ length: n }, () => limiter.take(address)).filter(Boolean).length
  t.equal(taken('a', 50), 40, 'the burst')
  t.equal(taken('b', 1), 1, 'another address has its own bucket')
  now += 500
  t.equal(taken('a', 50), 10, 'half a second later: 10 more at 20/s')
  now += 10_000
  t.equal(taken('a', 50), 40, 'never more than the burst after a pause')
})

t.test('the limiter forgets the least recently seen address past its bound', async (t) => {
  const limiter = new SourceRateLimiter({ ratePerSecond: 1, burst: 1, maxSources: 2 }, () => 0)
  t.ok(limiter.take('a'))
  t.ok(limiter.take('b'))
  t.notOk(limiter.take('a'), 'a is empty, and now the most recently seen')
  t.ok(limiter.take('c'), 'c pushes b out')
  t.equal(limiter.size, 2)
  t.notOk(limiter.take('a'), 'a was kept')
})

t.test('drops are logged once a minute per source, with the count they stand for by reason', async (t) => {
  let now = 0
  const throttle = new DropLogThrottle(60_000, 10, () => now)
  t.same(throttle.record('1.2.3.4', 'rate_limited'), { rate_limited: 1 })
  t.equal(throttle.record('1.2.3.4', 'rate_limited'), null)
  t.same(throttle.record('5.6.7.8', 'malformed'), { malformed: 1 }, 'another source has its own minute')
  now += 30_000
  t.equal(throttle.record('1.2.3.4', 'rate_limited'), null)
  now += 30_000
  t.same(throttle.record('1.2.3.4', 'malformed'), { rate_limited: 2, malformed: 1 }, 'each reason with its own count')
  t.equal(throttle.record('1.2.3.4', 'scanner'), null, 'a new minute starts')
})

t.test('scanner User-Agents, case-insensitive; ordinary ones are not', async (t) => {
  const ua = (value: string) => ({ headers: [{ name: 'User-Agent', value }] })
  for (const s of ['friendly-scanner', 'Friendly-Scanner', 'sipvicious', 'sipcli/v1.8', 'VaxSIPUserAgent/3.1', 'sundayddr'])
    t.ok(isScanner(ua(s)), s)
  for (const s of ['Asterisk PBX 20.5.0', 'FreeSWITCH-mod_sofia/1.10', 'baresip v3.10', 'Cisco-SIPGateway/IOS-15'])
    t.notOk(isScanner(ua(s)), s)
  t.notOk(isScanner({ headers: [] }), 'no User-Agent')
})
