import t from 'tap'
import { buildResponse } from '../../transports/sip/message/sip-response.js'
import { ServerTransactionTable } from '../../transports/sip/transactions/server-transaction-table.js'
import type { SipMessage, SipRequest } from '../../transports/sip/message/sip-message.js'
import type { TimerScheduler } from '../../transports/sip/timer-scheduler.js'

/** A clock that fires nothing until told: the table's bookkeeping is what is under test. */
function manualTimers() {
  const due: { fire: () => void; cancelled: boolean }[] = []
  const timers: TimerScheduler = {
    schedule(_ms, fire) {
      const entry = { fire, cancelled: false }
      due.push(entry)
      return { cancel: () => (entry.cancelled = true) }
    },
  }
  const fireAll = () => {
    for (const entry of due.splice(0)) if (!entry.cancelled) entry.fire()
  }
  return { timers, fireAll, armed: () => due.filter((d) => !d.cancelled).length }
}

const INVITE: SipRequest = {
  kind: 'request',
  method: 'INVITE',
  uri: 'sip:gw@127.0.0.1',
  headers: [
    { name: 'Via', value: 'SIP/2.0/UDP 127.0.0.1:5999;branch=z9hG4bKt' },
    { name: 'From', value: '<sip:a@b>;tag=1' },
    { name: 'To', value: '<sip:gw@127.0.0.1>' },
    { name: 'Call-ID', value: 'c' },
    { name: 'CSeq', value: '1 INVITE' },
  ],
  body: Buffer.alloc(0),
}

t.test('a transaction leaves the table when its state machine ends', async (t) => {
  const clock = manualTimers()
  const table = new ServerTransactionTable(clock.timers)
  const sent: SipMessage[] = []
  const tx = table.createNonInvite('k', { reliable: false, send: (m) => sent.push(m) })
  t.equal(table.find('k'), tx)
  tx?.respond(buildResponse(INVITE, 200, { toTag: 'x' }))
  t.equal(table.pendingTimers, 1, 'timer J')
  clock.fireAll()
  t.equal(table.size, 0)
  t.equal(table.pendingTimers, 0)
})

t.test('full: no new transaction (the caller answers statelessly)', async (t) => {
  const table = new ServerTransactionTable(manualTimers().timers, 1)
  t.ok(table.createInvite('a', { reliable: true, send: () => undefined }))
  t.equal(table.createInvite('b', { reliable: true, send: () => undefined }), null)
  t.equal(table.createNonInvite('c', { reliable: true, send: () => undefined }), null)
})

t.test('close cancels every timer, and a transaction answered after it (a late admission) arms none', async (t) => {
  const clock = manualTimers()
  const table = new ServerTransactionTable(clock.timers)
  const early = table.createInvite('a', { reliable: false, send: () => undefined })
  const late = table.createInvite('b', { reliable: false, send: () => undefined })
  early?.respond(buildResponse(INVITE, 403, { toTag: 'x' }))
  t.equal(clock.armed(), 2, 'timers G and H')
  table.close()
  t.equal(clock.armed(), 0)
  late?.respond(buildResponse(INVITE, 403, { toTag: 'y' }))
  t.equal(clock.armed(), 0, 'nothing armed after close')
  t.equal(table.pendingTimers, 0)
  t.equal(table.createNonInvite('c', { reliable: true, send: () => undefined }), null, 'no new transaction after close')
})
