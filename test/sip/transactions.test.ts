import t from 'tap'
import { virtualTimers } from '../helpers/virtual-timers.js'
import { ackForError, InviteClientTransaction, InviteServerTransaction } from '../../transports/sip/transactions/invite-transactions.js'
import { NonInviteClientTransaction, NonInviteServerTransaction } from '../../transports/sip/transactions/non-invite-transactions.js'
import { decodeSipMessage } from '../../transports/sip/message/sip-message-codec.js'
import { getHeader, type SipMessage, type SipRequest, type SipResponse } from '../../transports/sip/message/sip-message.js'
import { transactionKey } from '../../transports/sip/transactions/transaction-timers.js'

/** A transport that records what was sent, and when. */
function wire(clock: { now: () => number }) {
  const sent: { at: number; message: SipMessage }[] = []
  return { sent, send: (message: SipMessage) => sent.push({ at: clock.now(), message }) }
}

const parse = <T extends SipMessage>(text: string): T => {
  const r = decodeSipMessage(Buffer.from(text.replace(/\n/g, '\r\n')))
  if (!r.ok) throw new Error(r.error.reason)
  return r.message as T
}

const INVITE = parse<SipRequest>(`INVITE sip:+15550001111@gw.example.com SIP/2.0
Via: SIP/2.0/UDP pbx.example.net:5060;branch=z9hG4bK74bf9
Max-Forwards: 70
From: <sip:+15552223333@pbx.example.net>;tag=9fxced76sl
To: <sip:+15550001111@gw.example.com>
Call-ID: 3848276298220188511@pbx.example.net
CSeq: 1 INVITE
Route: <sip:edge.example.com;lr>
Content-Length: 0

`)

function response(status: number, request: SipRequest = INVITE, toTag = 'gw1'): SipResponse {
  const headers = request.headers
    .filter((h) => ['Via', 'From', 'Call-ID', 'CSeq', 'To'].includes(h.name))
    .map((h) => (h.name === 'To' && status > 100 ? { name: 'To', value: `${h.value};tag=${toTag}` } : h))
  return { kind: 'response', status, reason: String(status), headers, body: Buffer.alloc(0) }
}

const BYE = parse<SipRequest>(`BYE sip:pbx@pbx.example.net SIP/2.0
Via: SIP/2.0/UDP gw.example.com:5060;branch=z9hG4bKnashds7
Max-Forwards: 70
From: <sip:+15550001111@gw.example.com>;tag=gw1
To: <sip:+15552223333@pbx.example.net>;tag=9fxced76sl
Call-ID: 3848276298220188511@pbx.example.net
CSeq: 2 BYE
Content-Length: 0

`)

t.test('INVITE client over UDP: timer A doubles, timer B gives up after 64*T1', async (t) => {
  const clock = virtualTimers()
  const net = wire(clock)
  let timedOut = 0
  const tx = new InviteClientTransaction(
    INVITE,
    { timers: clock.timers, reliable: false, send: net.send },
    { onResponse: () => {}, onTimeout: () => timedOut++ },
  )
  tx.start()
  clock.advance(40_000)
  t.same(
    net.sent.map((s) => s.at),
    [0, 500, 1500, 3500, 7500, 15500, 31500],
    'sent at 0, then after 0.5, 1, 2, 4, 8, 16 s',
  )
  t.same([tx.state, timedOut], ['terminated', 1], 'timer B at 32 s')
})

t.test('INVITE client over TCP: no retransmission, timer B still runs', async (t) => {
  const clock = virtualTimers()
  const net = wire(clock)
  let timedOut = 0
  const tx = new InviteClientTransaction(
    INVITE,
    { timers: clock.timers, reliable: true, send: net.send },
    { onResponse: () => {}, onTimeout: () => timedOut++ },
  )
  tx.start()
  clock.advance(31_999)
  t.same([net.sent.length, timedOut], [1, 0])
  clock.advance(1)
  t.same([tx.state, timedOut], ['terminated', 1])
})

t.test('INVITE client: 180 stops retransmits, 486 is ACKed by the transaction, retransmitted 486 re-ACKed, timer D', async (t) => {
  const clock = virtualTimers()
  const net = wire(clock)
  const got: number[] = []
  const tx = new InviteClientTransaction(
    INVITE,
    { timers: clock.timers, reliable: false, send: net.send },
    { onResponse: (r) => got.push(r.status), onTimeout: () => {} },
  )
  tx.start()
  clock.advance(600)
  tx.receive(response(180))
  clock.advance(10_000)
  t.equal(net.sent.length, 2, 'no retransmission in Proceeding')
  clock.advance(60_000)
  t.equal(tx.state, 'proceeding', 'no timer B once ringing: a call may ring past 32 s')
  tx.receive(response(486))
  t.equal(tx.state, 'completed')
  const ack = net.sent[2]!.message as SipRequest
  t.same(
    [ack.method, ack.uri, getHeader(ack, 'CSeq'), getHeader(ack, 'To')],
    ['ACK', INVITE.uri, '1 ACK', '<sip:+15550001111@gw.example.com>;tag=gw1'],
  )
  t.equal(getHeader(ack, 'Via'), getHeader(INVITE, 'Via'), 'same branch as the INVITE')
  t.equal(getHeader(ack, 'Route'), '<sip:edge.example.com;lr>')
  tx.receive(response(486))
  t.same([net.sent.length, got], [4, [180, 486]], 'ACK resent, the TU told once')
  clock.advance(31_999)
  t.equal(tx.state, 'completed')
  clock.advance(1)
  t.equal(tx.state, 'terminated', 'timer D (32 s over UDP)')
})

t.test('INVITE client: 2xx goes to the TU (it ACKs), retransmitted 2xx too, timer M ends it', async (t) => {
  const clock = virtualTimers()
  const net = wire(clock)
  const got: number[] = []
  const tx = new InviteClientTransaction(
    INVITE,
    { timers: clock.timers, reliable: false, send: net.send },
    { onResponse: (r) => got.push(r.status), onTimeout: () => {} },
  )
  tx.start()
  tx.receive(response(200))
  tx.receive(response(200))
  t.same([tx.state, got, net.sent.length], ['accepted', [200, 200], 1], 'no ACK from the transaction for a 2xx')
  clock.advance(32_000)
  t.equal(tx.state, 'terminated')
})

t.test('INVITE server over UDP: error answer resent on G (T1 doubling to T2) until ACK, then timer I', async (t) => {
  const clock = virtualTimers()
  const net = wire(clock)
  const tx = new InviteServerTransaction({ timers: clock.timers, reliable: false, send: net.send })
  tx.respond(response(100))
  tx.receiveRetransmission(INVITE)
  t.same(
    net.sent.map((s) => (s.message as SipResponse).status),
    [100, 100],
    'a retransmitted INVITE gets the last provisional again',
  )
  tx.respond(response(486))
  clock.advance(10_000)
  t.same(
    net.sent.slice(2).map((s) => s.at),
    [0, 500, 1500, 3500, 7500],
    '486 then after 0.5, 1, 2, 4 s (capped at T2)',
  )
  tx.receiveRetransmission(INVITE)
  t.equal((net.sent.at(-1)!.message as SipResponse).status, 486, 'a retransmitted INVITE gets the 486')
  tx.receiveAck(ackForError(INVITE, response(486)))
  t.equal(tx.state, 'confirmed')
  const count = net.sent.length
  clock.advance(4_999)
  t.same([tx.state, net.sent.length], ['confirmed', count], 'no more retransmits once ACKed')
  clock.advance(1)
  t.equal(tx.state, 'terminated', 'timer I = T4')
})

t.test('INVITE server: no ACK for an error answer, timer H ends it and tells the TU', async (t) => {
  const clock = virtualTimers()
  const net = wire(clock)
  const noAck: number[] = []
  const tx = new InviteServerTransaction(
    { timers: clock.timers, reliable: false, send: net.send },
    { onNoAck: (r) => noAck.push(r.status) },
  )
  tx.respond(response(603))
  clock.advance(32_000)
  t.same([tx.state, noAck], ['terminated', [603]])
  t.equal(net.sent.at(-1)!.at, 31_500, 'retransmitted every T2 until H')
})

t.test('INVITE server: 2xx resent until the ACK, retransmitted INVITEs absorbed, BYE-before-ACK case', async (t) => {
  const clock = virtualTimers()
  const net = wire(clock)
  const noAck: number[] = []
  const tx = new InviteServerTransaction(
    { timers: clock.timers, reliable: false, send: net.send },
    { onNoAck: (r) => noAck.push(r.status) },
  )
  tx.respond(response(200))
  clock.advance(1600)
  t.same(
    net.sent.map((s) => s.at),
    [0, 500, 1500],
    '2xx retransmitted on T1 doubling',
  )
  tx.receiveRetransmission(INVITE)
  t.equal(net.sent.length, 3, 'a retransmitted INVITE in Accepted is absorbed')
  tx.respond(response(486))
  t.equal(net.sent.length, 3, 'no error answer after a 2xx')
  tx.receiveAck(INVITE)
  clock.advance(10_000)
  t.equal(net.sent.length, 3, 'the ACK stops the 2xx')
  clock.advance(22_000)
  t.same([tx.state, noAck], ['terminated', []], 'timer L, and the ACK came')

  const lonely = new InviteServerTransaction(
    { timers: clock.timers, reliable: false, send: () => {} },
    { onNoAck: (r) => noAck.push(r.status) },
  )
  lonely.respond(response(200))
  clock.advance(32_000)
  t.same(noAck, [200], 'a 2xx never ACKed: the TU hangs up with BYE')
})

t.test('INVITE server over TCP: no retransmissions, timer I is zero', async (t) => {
  const clock = virtualTimers()
  const net = wire(clock)
  const tx = new InviteServerTransaction({ timers: clock.timers, reliable: true, send: net.send })
  tx.respond(response(480))
  clock.advance(10_000)
  t.equal(net.sent.length, 1)
  tx.receiveAck(INVITE)
  clock.advance(0)
  t.equal(tx.state, 'terminated')
})

t.test('non-INVITE client over UDP: E doubles to T2, holds T2 in Proceeding, F times out', async (t) => {
  const clock = virtualTimers()
  const net = wire(clock)
  let timedOut = 0
  const tx = new NonInviteClientTransaction(
    BYE,
    { timers: clock.timers, reliable: false, send: net.send },
    { onResponse: () => {}, onTimeout: () => timedOut++ },
  )
  tx.start()
  clock.advance(16_000)
  t.same(
    net.sent.map((s) => s.at),
    [0, 500, 1500, 3500, 7500, 11500, 15500],
    'intervals 0.5, 1, 2, 4, then 4 (T2)',
  )
  clock.advance(16_000)
  t.same([tx.state, timedOut], ['terminated', 1], 'timer F at 64*T1')
})

t.test('non-INVITE client: a final response completes it, timer K absorbs retransmissions; TCP has no E', async (t) => {
  const clock = virtualTimers()
  const net = wire(clock)
  const got: number[] = []
  const tx = new NonInviteClientTransaction(
    BYE,
    { timers: clock.timers, reliable: false, send: net.send },
    { onResponse: (r) => got.push(r.status), onTimeout: () => {} },
  )
  tx.start()
  tx.receive(response(100, BYE))
  clock.advance(4_600)
  t.same(
    net.sent.map((s) => s.at),
    [0, 500, 4500],
    'the armed E fires at 0.5 s, then in Proceeding it is T2 (section 17.1.2.2)',
  )
  tx.receive(response(200, BYE))
  tx.receive(response(200, BYE))
  t.same([tx.state, got], ['completed', [100, 200]])
  clock.advance(5_000)
  t.equal(tx.state, 'terminated', 'timer K = T4')

  const tcp = new NonInviteClientTransaction(
    BYE,
    { timers: clock.timers, reliable: true, send: net.send },
    { onResponse: () => {}, onTimeout: () => {} },
  )
  const before = net.sent.length
  tcp.start()
  clock.advance(10_000)
  t.equal(net.sent.length, before + 1, 'no retransmission over TCP')
  tcp.receive(response(200, BYE))
  clock.advance(0)
  t.equal(tcp.state, 'terminated', 'timer K is zero over TCP')
})

t.test('non-INVITE server: retransmitted requests get the last response; timer J', async (t) => {
  const clock = virtualTimers()
  const net = wire(clock)
  const tx = new NonInviteServerTransaction({ timers: clock.timers, reliable: false, send: net.send })
  tx.receiveRetransmission(BYE)
  t.equal(net.sent.length, 0, 'nothing to resend in Trying')
  tx.respond(response(200, BYE))
  tx.receiveRetransmission(BYE)
  t.same(
    net.sent.map((s) => (s.message as SipResponse).status),
    [200, 200],
  )
  clock.advance(31_999)
  t.equal(tx.state, 'completed')
  clock.advance(1)
  t.equal(tx.state, 'terminated', 'timer J = 64*T1 over UDP')
  const tcp = new NonInviteServerTransaction({ timers: clock.timers, reliable: true, send: net.send })
  tcp.respond(response(200, BYE))
  clock.advance(0)
  t.equal(tcp.state, 'terminated', 'timer J is zero over TCP')
})

t.test('transaction keys: branch, sent-by and method; ACK matches its INVITE', async (t) => {
  const key = transactionKey(INVITE)
  t.equal(key, 'z9hG4bK74bf9|pbx.example.net:5060|INVITE')
  t.equal(transactionKey(ackForError(INVITE, response(486))), key)
  t.equal(transactionKey(response(486)), key, 'responses match too')
  t.not(transactionKey(BYE), key)
  const old = {
    ...INVITE,
    headers: INVITE.headers.map((h) => (h.name === 'Via' ? { name: 'Via', value: 'SIP/2.0/UDP pbx.example.net;branch=1234' } : h)),
  }
  t.not(transactionKey(old), null, 'a branch without the cookie is keyed too (by the older rule)')
  t.not(transactionKey(old), key)
})

t.test('RFC 2543 keys (section 17.2.3): URI, tags, Call-ID, CSeq and top Via; its ACK and CANCEL find the INVITE', async (t) => {
  const via = (value: string) => (h: { name: string; value: string }) => (h.name === 'Via' ? { name: 'Via', value } : h)
  const old: SipRequest = { ...INVITE, headers: INVITE.headers.map(via('SIP/2.0/UDP pbx.example.net;branch=1234')) }
  const noBranch: SipRequest = { ...INVITE, headers: INVITE.headers.map(via('SIP/2.0/UDP pbx.example.net')) }
  const key = transactionKey(old)
  t.equal(transactionKey({ ...old, headers: [...old.headers] }), key, 'a retransmission matches')
  t.equal(transactionKey(ackForError(old, response(486, old))), key, 'the ACK of our error answer (with our To tag) matches')
  const cancel: SipRequest = {
    ...old,
    method: 'CANCEL',
    headers: old.headers.map((h) => (h.name === 'CSeq' ? { name: 'CSeq', value: '1 CANCEL' } : h)),
  }
  t.not(transactionKey(cancel), key, 'a CANCEL is a transaction of its own')
  t.not(transactionKey(noBranch), null, 'no branch at all: keyed the same way')
  t.not(transactionKey(noBranch), key, 'another top Via: another transaction')
  t.not(transactionKey({ ...old, uri: 'sip:+15550009999@gw.example.com' }), key, 'another Request-URI')
  const otherFrom = old.headers.map((h) =>
    h.name === 'From' ? { name: 'From', value: '<sip:+15552223333@pbx.example.net>;tag=other' } : h,
  )
  t.not(transactionKey({ ...old, headers: otherFrom }), key, 'another From tag')
  const nextSeq = old.headers.map((h) => (h.name === 'CSeq' ? { name: 'CSeq', value: '2 INVITE' } : h))
  t.not(transactionKey({ ...old, headers: nextSeq }), key, 'another CSeq')
  t.equal(transactionKey(response(200, old)), null, 'a response without the cookie is never ours (our branches have it)')
})
