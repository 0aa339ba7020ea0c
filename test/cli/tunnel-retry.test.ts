/**
 * The pure rules behind `voxgate tunnel`'s reconnection and its cancel reasons: the backoff's doubling, cap and
 * jitter; which refusals are fatal; how a cancel is told to be a timeout.
 */
import t from 'tap'
import { Backoff, retryMaxMs, RETRY_MAX_MS } from '../../cli/tunnel/backoff.js'
import { refusalError } from '../../cli/tunnel/tunnel-connection.js'
import { cancelReason } from '../../gateway/tunnels/local-tunnel.js'

t.test('backoff: 0.5 s doubling to 10 s, each wait in the upper half of its step; reset starts over', async (t) => {
  const top = new Backoff(RETRY_MAX_MS, () => 1)
  t.same(
    Array.from({ length: 8 }, () => top.next()),
    [500, 1000, 2000, 4000, 8000, 10000, 10000, 10000],
  )
  t.equal(top.attempt, 8)
  top.reset()
  t.equal(top.next(), 500)
  const bottom = new Backoff(RETRY_MAX_MS, () => 0)
  t.same(
    Array.from({ length: 6 }, () => bottom.next()),
    [250, 500, 1000, 2000, 4000, 5000],
  )
  t.equal(new Backoff(300, () => 1).next(), 300, 'a cap below 0.5 s caps the first wait too')
  t.equal(retryMaxMs({ VOXGATE_TUNNEL_RETRY_MAX_MS: '1000' }), 1000)
  t.equal(retryMaxMs({ VOXGATE_TUNNEL_RETRY_MAX_MS: 'soon' }), RETRY_MAX_MS)
  t.equal(retryMaxMs({}), RETRY_MAX_MS)
})

t.test('refusals: key, ownership and bad requests are fatal; 5xx is retried', async (t) => {
  const fatal = (status: number, code?: string) => refusalError(status, { error: 'x', ...(code && { code }) }, 'agt_1', 'http://gw')
  t.match(fatal(400, 'invalid_api_key')?.message, /refused the API key/)
  t.match(fatal(401)?.message, /refused the API key/)
  t.match(fatal(403)?.message, /refused the API key/)
  t.match(fatal(404, 'agent_not_found')?.message, /Failed to retrieve Agent information/)
  t.match(fatal(409, 'tunnel_exists')?.message, /HTTP 409, tunnel_exists/)
  t.match(fatal(400, 'validation_failed')?.message, /HTTP 400/)
  t.equal(fatal(503, 'shutting_down'), undefined, 'a replica shutting down: retried')
  t.equal(fatal(502), undefined, 'a balancer with no replica behind it: retried')
})

t.test('cancel reasons: the deadlines from the send time, an explicit shutdown, else the caller went away', async (t) => {
  const d = { firstByteMs: 2000, totalMs: 10000 }
  t.same(cancelReason(undefined, 2010, 0, d), {
    reason: 'timeout',
    detail: 'no byte of the reply within time_to_first_byte_ms (2000 ms)',
  })
  t.same(cancelReason(undefined, 2010, 15, d), { reason: 'caller_gone' }, 'bytes came: not the first-byte deadline')
  t.same(cancelReason(undefined, 10_001, 15, d), { reason: 'timeout', detail: 'the reply took longer than timeout_ms (10000 ms)' })
  t.same(cancelReason(undefined, 900, 0, d), { reason: 'caller_gone' })
  t.same(cancelReason('shutdown', 900, 0, d), { reason: 'shutdown' })
  t.same(cancelReason(undefined, 5000, 0, undefined), { reason: 'caller_gone' }, 'no deadlines known')
})
