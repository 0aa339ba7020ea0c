import t from 'tap'
import { BoundedSlots } from '../../pipeline/runtime/bounded-slots.js'

t.test('at most size holders, maxWaiting in line, one more refused at once; release serves the line in order', async (t) => {
  const slots = new BoundedSlots(2, 2)
  t.equal(await slots.acquire(), true)
  t.equal(await slots.acquire(), true)
  const order: number[] = []
  const third = slots.acquire().then((ok) => order.push(3) && ok)
  const fourth = slots.acquire().then((ok) => order.push(4) && ok)
  t.equal(await slots.acquire(), false, 'the line is full: refused at once')
  slots.release()
  slots.release()
  t.strictSame(await Promise.all([third, fourth]), [true, true])
  t.strictSame(order, [3, 4], 'first in line, first served')
})

t.test('a waiter whose signal aborts leaves the line and rejects', async (t) => {
  const slots = new BoundedSlots(1, 1)
  await slots.acquire()
  const ac = new AbortController()
  const waiting = slots.acquire(ac.signal)
  ac.abort(new Error('call ended'))
  await t.rejects(waiting, { message: 'call ended' })
  const next = slots.acquire()
  slots.release()
  t.equal(await next, true, 'the aborted waiter no longer holds a place in line')
  await t.rejects(slots.acquire(ac.signal), { message: 'call ended' }, 'an aborted signal is refused at once')
})
