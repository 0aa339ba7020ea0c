/**
 * A request's deadline: its parents abort it with their reason, its time limit aborts it and says so, and once
 * done it holds no timer and no listener on its parents (a session's signal outlives thousands of requests).
 */
import t from 'tap'
import { EventEmitter } from 'node:events'
import { RequestDeadline } from '../../pipeline/runtime/request-deadline.js'

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
const listeners = (signal: AbortSignal) => EventEmitter.getEventListeners(signal, 'abort').length

t.test('a parent aborts the request with its own reason, and it is not a timeout', async (t) => {
  const session = new AbortController()
  const reply = new AbortController()
  const d = new RequestDeadline(10_000, [session.signal, reply.signal])
  reply.abort(new Error('barge-in'))
  t.ok(d.signal.aborted)
  t.equal((d.signal.reason as Error).message, 'barge-in')
  t.notOk(d.timedOut)
  d.done()
})

t.test('the time limit aborts the request as a timeout', async (t) => {
  const session = new AbortController()
  const d = new RequestDeadline(20, [session.signal])
  await new Promise((r) => d.signal.addEventListener('abort', r, { once: true }))
  t.ok(d.timedOut)
  t.equal((d.signal.reason as Error).name, 'TimeoutError')
  d.done()
  t.notOk(session.signal.aborted, 'the parent is untouched')
})

t.test('done releases the timer and the hooks on the parents', async (t) => {
  const session = new AbortController()
  const before = timers()
  const d = new RequestDeadline(60_000, [session.signal])
  t.equal(timers(), before + 1, 'a timer while the request runs')
  t.equal(listeners(session.signal), 1, 'one listener on the parent')
  d.done()
  d.done()
  t.equal(timers(), before, 'no timer left to fire its full limit later')
  t.equal(listeners(session.signal), 0, 'no listener left on the parent')
  session.abort()
  t.notOk(d.signal.aborted, 'a parent aborting later no longer reaches the finished request')
})

t.test('stopClock ends the time limit but not the parents', async (t) => {
  const session = new AbortController()
  const d = new RequestDeadline(20, [session.signal])
  d.stopClock()
  await new Promise((r) => setTimeout(r, 50))
  t.notOk(d.signal.aborted, 'no timeout once the clock stopped')
  session.abort(new Error('hung up'))
  t.ok(d.signal.aborted, 'the parent still aborts it')
  t.notOk(d.timedOut)
  d.done()
})

t.test('an already aborted parent aborts the request at once, with no timer', async (t) => {
  const before = timers()
  const d = new RequestDeadline(60_000, [AbortSignal.abort(new Error('closed'))])
  t.ok(d.signal.aborted)
  t.equal((d.signal.reason as Error).message, 'closed')
  t.equal(timers(), before)
  d.done()
})
