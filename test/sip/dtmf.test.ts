import t from 'tap'
import { DtmfReceiver, type ReceivedDigit } from '../../transports/sip/media/dtmf-receiver.js'
import { dtmfPackets, END_REPEATS } from '../../transports/sip/media/dtmf-sender.js'
import { decodeTelephoneEvent, digitToEvent, encodeTelephoneEvent, eventToDigit } from '../../transports/sip/media/telephone-event-codec.js'

t.test('telephone-event payload codec (RFC 4733 section 2.3)', async (t) => {
  // event 5, E=1, volume 10, duration 800
  t.same(decodeTelephoneEvent(Buffer.from([5, 0x8a, 0x03, 0x20])), { event: 5, end: true, volume: 10, duration: 800 })
  t.same(encodeTelephoneEvent({ event: 11, end: false, volume: 63, duration: 160 }), Buffer.from([11, 0x3f, 0x00, 0xa0]))
  t.equal(decodeTelephoneEvent(Buffer.from([1, 2, 3])), null, 'too short')
  t.same(['0', '9', '*', '#', 'A', 'd'].map(digitToEvent), [0, 9, 10, 11, 12, 15])
  t.same([eventToDigit(10), eventToDigit(11), eventToDigit(16)], ['*', '#', undefined], '16 (flash) is no digit')
})

t.test('sender: start timestamp on every packet, marker on the first, growing duration, three end packets', async (t) => {
  const packets = dtmfPackets({ digit: '7', timestamp: 160_000, sequence: 65534, durationMs: 100 })!
  t.equal(packets.length, 4 + END_REPEATS, '100 ms: 4 reports of 20-80 ms, then the end three times')
  t.ok(packets.every((p) => p.timestamp === 160_000))
  t.same(
    packets.map((p) => p.marker),
    [true, false, false, false, false, false, false],
  )
  t.same(
    packets.map((p) => p.sequence),
    [65534, 65535, 0, 1, 2, 3, 4],
    'sequence numbers wrap',
  )
  t.same(
    packets.map((p) => p.duration),
    [160, 320, 480, 640, 800, 800, 800],
  )
  t.same(
    packets.map((p) => p.end),
    [false, false, false, false, true, true, true],
  )
  t.same(decodeTelephoneEvent(packets[6]!.payload), { event: 7, end: true, volume: 10, duration: 800 })
  t.equal(dtmfPackets({ digit: 'x', timestamp: 0, sequence: 0 }), null)
  t.equal(dtmfPackets({ digit: '1', timestamp: 0, sequence: 0, durationMs: 1 })!.length, 1 + END_REPEATS, 'at least 40 ms')
})

t.test('receiver: one digit per press from a sender packet train, retransmitted ends dropped', async (t) => {
  const rx = new DtmfReceiver({ now: () => 0 })
  const digits: ReceivedDigit[] = []
  for (const [i, digit] of ['1', '2', '#'].entries()) {
    const packets = dtmfPackets({ digit, timestamp: 1000 * i, sequence: 0, durationMs: 120 })!
    for (const p of packets) digits.push(...rx.receive({ ssrc: 42, timestamp: p.timestamp, payload: p.payload }))
  }
  t.same(digits, [
    { digit: '1', durationMs: 120 },
    { digit: '2', durationMs: 120 },
    { digit: '#', durationMs: 120 },
  ])
})

t.test('receiver: reordered and late reports, a repeated key with a new timestamp, another SSRC', async (t) => {
  const rx = new DtmfReceiver({ now: () => 0 })
  const five = dtmfPackets({ digit: '5', timestamp: 8000, sequence: 0 })!
  const feed = (i: number) => rx.receive({ ssrc: 1, timestamp: 8000, payload: five[i]!.payload })
  t.same(feed(1), [])
  t.same(feed(0), [], 'the first report arriving late')
  t.same(feed(5), [{ digit: '5', durationMs: 100 }], 'the first end report emits the digit')
  t.same(feed(2), [], 'a report after the end')
  t.same(feed(6), [], 'a retransmitted end')
  t.same(rx.receive({ ssrc: 1, timestamp: 16000, payload: five[5]!.payload }), [{ digit: '5', durationMs: 100 }], 'pressed again')
  t.same(rx.receive({ ssrc: 2, timestamp: 8000, payload: five[5]!.payload }), [{ digit: '5', durationMs: 100 }], 'another stream')
  t.same(rx.receive({ ssrc: 1, timestamp: 24000, payload: Buffer.from([16, 0x8a, 0, 160]) }), [], 'flash is not a digit')
  t.same(rx.receive({ ssrc: 1, timestamp: 24000, payload: Buffer.from([1]) }), [], 'a short payload')
})

t.test('receiver: every end report lost, the digit still comes out once', async (t) => {
  let now = 0
  const rx = new DtmfReceiver({ now: () => now, endTimeoutMs: 500 })
  const three = dtmfPackets({ digit: '3', timestamp: 100, sequence: 0 })!.filter((p) => !p.end)
  const four = dtmfPackets({ digit: '4', timestamp: 2000, sequence: 10 })!
  for (const p of three) t.same(rx.receive({ ssrc: 9, timestamp: p.timestamp, payload: p.payload }), [])
  t.same(
    rx.receive({ ssrc: 9, timestamp: 2000, payload: four[0]!.payload }),
    [{ digit: '3', durationMs: 80 }],
    'reported when the next event starts',
  )
  now += 499
  t.same(rx.poll(), [], 'still within the timeout')
  now += 1
  t.same(rx.poll(), [{ digit: '4', durationMs: 20 }], 'reported when silent for the timeout')
  t.same(rx.poll(), [])
  t.same(rx.receive({ ssrc: 9, timestamp: 2000, payload: four[6]!.payload }), [], 'its end arriving afterwards is not a second digit')
})
