import t from 'tap'
import { type PacedPacket, RtpPacer } from '../../transports/sip/media/rtp-pacer.js'
import { decodeTelephoneEvent } from '../../transports/sip/media/telephone-event-codec.js'

/**
 * Runs the pacer the way the transport will: call tick(), "sleep" the returned delay plus the timer's lateness
 * (a function of the call count), until `untilMs`. Returns each packet with its send time.
 */
function run(pacer: RtpPacer, clock: { now: number }, untilMs: number, lateness: (i: number) => number = () => 0) {
  const sent: { at: number; packet: PacedPacket }[] = []
  for (let i = 0; clock.now < untilMs; i++) {
    const { packet, delayMs } = pacer.tick()
    if (packet !== undefined) sent.push({ at: clock.now, packet })
    clock.now += delayMs + lateness(i)
  }
  return sent
}

const frames = (n: number): Buffer[] => Array.from({ length: n }, (_, i) => Buffer.alloc(160, i % 200))

t.test('steady 20 ms packets; sequence and timestamp step by one and by 160', async (t) => {
  const clock = { now: 1000 }
  const pacer = new RtpPacer({ now: () => clock.now, payloadType: 0, initialSequence: 65530, initialTimestamp: 2 ** 32 - 320 })
  for (const f of frames(50)) pacer.enqueue(f)
  const sent = run(pacer, clock, 2000)
  t.equal(sent.length, 50, 'one second, fifty packets')
  t.same(
    sent.slice(0, 8).map((s) => s.packet.sequence),
    [65530, 65531, 65532, 65533, 65534, 65535, 0, 1],
  )
  t.same(
    sent.slice(0, 4).map((s) => s.packet.timestamp),
    [2 ** 32 - 320, 2 ** 32 - 160, 0, 160],
    'the timestamp wraps',
  )
  t.ok(
    sent.every((s, i) => i === 0 || s.at - sent[i - 1]!.at === 20),
    'exactly 20 ms apart',
  )
  t.same(
    sent.map((s) => s.packet.marker),
    [true, ...Array(49).fill(false)],
    'marker on the first packet of the talkspurt',
  )
})

t.test('timer lateness does not accumulate (drift correction) and never bunches packets', async (t) => {
  const clock = { now: 0 }
  const pacer = new RtpPacer({ now: () => clock.now, payloadType: 8, initialSequence: 0, initialTimestamp: 0 })
  for (const f of frames(600)) pacer.enqueue(f)
  // Every timer fires 0-7 ms late, as a busy event loop does.
  const sent = run(pacer, clock, 10_000, (i) => (i * 37) % 8)
  t.ok(sent.length >= 499 && sent.length <= 500, `about 500 packets in 10 s (${sent.length}), not fewer from lateness`)
  const gaps = sent.slice(1).map((s, i) => s.at - sent[i]!.at)
  t.ok(Math.min(...gaps) >= 10, `never closer than half a slot (min ${Math.min(...gaps)} ms)`)
  t.ok(
    sent.every((s, i) => s.packet.timestamp === i * 160),
    'the media clock steps by 160 per packet',
  )
})

t.test('a long stall skips the missed slots instead of bursting them out', async (t) => {
  const clock = { now: 0 }
  const pacer = new RtpPacer({ now: () => clock.now, payloadType: 0, initialSequence: 0, initialTimestamp: 0 })
  for (const f of frames(20)) pacer.enqueue(f)
  const before = run(pacer, clock, 100)
  t.equal(before.length, 5)
  clock.now += 200 // the event loop was blocked for 200 ms
  const after = run(pacer, clock, 400)
  const gaps = after.slice(1).map((s, i) => s.at - after[i]!.at)
  t.ok(Math.min(...gaps) >= 10, 'no burst after the stall')
  t.ok(pacer.stats.skipped >= 9, `missed slots skipped (${pacer.stats.skipped})`)
  t.ok(after[0]!.packet.timestamp - before[4]!.packet.timestamp >= 160 * 10, 'the timestamp jumps with wall time')
  t.equal(after[0]!.packet.marker, true, 'a new talkspurt after the gap')
  t.equal(after[0]!.packet.sequence, 5, 'but sequence numbers stay contiguous')
})

t.test('silence: the timestamp keeps running, the next audio has the marker', async (t) => {
  const clock = { now: 0 }
  const pacer = new RtpPacer({ now: () => clock.now, payloadType: 0, initialSequence: 0, initialTimestamp: 0 })
  pacer.enqueue(frames(1)[0]!)
  const first = run(pacer, clock, 100)
  t.equal(first.length, 1)
  t.equal(pacer.stats.idle, 4)
  pacer.enqueue(frames(1)[0]!)
  const second = run(pacer, clock, 120)
  t.same([second[0]!.packet.timestamp, second[0]!.packet.marker, second[0]!.packet.sequence], [800, true, 1])
})

t.test('bounded queue and clear() for barge-in', async (t) => {
  const pacer = new RtpPacer({ now: () => 0, payloadType: 0, maxQueuedFrames: 3 })
  t.same(
    frames(4).map((f) => pacer.enqueue(f)),
    [true, true, true, false],
  )
  t.equal(pacer.clear(), 3)
  t.equal(pacer.queued, 0)
  t.equal(pacer.stats.cleared, 3)
})

t.test('a digit goes out as telephone-event packets in its slots, between audio frames', async (t) => {
  const clock = { now: 0 }
  const pacer = new RtpPacer({
    now: () => clock.now,
    payloadType: 0,
    telephoneEventPayloadType: 101,
    initialSequence: 0,
    initialTimestamp: 0,
  })
  pacer.enqueue(frames(1)[0]!)
  t.ok(pacer.enqueueDigit('9', 60))
  pacer.enqueue(frames(1)[0]!)
  const sent = run(pacer, clock, 200).map((s) => s.packet)
  t.same(
    sent.map((p) => p.payloadType),
    [0, 101, 101, 101, 101, 101, 0],
    'audio, 2 reports + 3 end reports, audio',
  )
  const events = sent.filter((p) => p.payloadType === 101)
  t.ok(
    events.every((p) => p.timestamp === 160),
    'every report carries the event start',
  )
  t.same(
    events.map((p) => decodeTelephoneEvent(p.payload)!.duration),
    [160, 320, 480, 480, 480],
  )
  t.same(
    events.map((p) => p.marker),
    [true, false, false, false, false],
  )
  t.same(
    sent.map((p) => p.sequence),
    [0, 1, 2, 3, 4, 5, 6],
  )
  t.equal(sent[6]!.timestamp, 160 * 6, 'audio resumes at the media time after the event')
  t.notOk(new RtpPacer({ now: () => 0, payloadType: 0 }).enqueueDigit('1'), 'no telephone-event negotiated')
})

t.test('with a silence frame every idle slot sends it; the marker only after a gap in transmission', async (t) => {
  const clock = { now: 0 }
  const silence = Buffer.alloc(160, 0xff)
  const pacer = new RtpPacer({
    now: () => clock.now,
    payloadType: 0,
    telephoneEventPayloadType: 101,
    initialSequence: 0,
    initialTimestamp: 0,
    silence,
  })
  const quiet = run(pacer, clock, 100)
  t.equal(quiet.length, 5, 'a packet in every slot while nothing is queued')
  t.ok(
    quiet.every((s) => s.packet.payload === silence && s.packet.payloadType === 0),
    'the G.711 silence frame',
  )
  t.same(
    quiet.map((s) => s.packet.marker),
    [true, false, false, false, false],
    'the marker on the first packet of the stream only',
  )
  t.equal(pacer.stats.idle, 5)
  const [speech] = frames(1)
  pacer.enqueue(speech!)
  const talk = run(pacer, clock, 160)
  t.same(
    talk.map((s) => [s.packet.payload === speech, s.packet.marker, s.packet.sequence, s.packet.timestamp]),
    [
      [true, false, 5, 800],
      [false, false, 6, 960],
      [false, false, 7, 1120],
    ],
    'audio and silence continue one stream: contiguous sequence and timestamps, no new talkspurt',
  )
  t.ok(
    talk.slice(1).every((s, i) => s.at - talk[i]!.at === 20),
    'still 20 ms apart',
  )
  clock.now += 300 // a stall: the slots it missed are skipped, not sent
  const after = run(pacer, clock, clock.now + 40)
  t.equal(after[0]!.packet.marker, true, 'a gap in transmission: the next packet has the marker')
  t.equal(after[0]!.packet.sequence, 8)
  t.ok(pacer.enqueueDigit('5', 40))
  const digit = run(pacer, clock, clock.now + 140).map((s) => s.packet)
  t.same(
    digit.map((p) => [p.payloadType, p.marker]),
    [
      [101, true],
      [101, false],
      [101, false],
      [101, false],
      [0, true],
      [0, false],
      [0, false],
    ],
    'a digit replaces the silence in its slots; the audio stream resumes with the marker',
  )
})

t.test('pause() holds the queued audio to the frame (silence meanwhile); resume() plays on, clear() drops it', async (t) => {
  const clock = { now: 0 }
  const silence = Buffer.alloc(160, 0xff)
  const pacer = new RtpPacer({ now: () => clock.now, payloadType: 0, initialSequence: 0, initialTimestamp: 0, silence })
  const audio = frames(6)
  for (const f of audio) pacer.enqueue(f)
  const before = run(pacer, clock, 40)
  t.same(
    before.map((s) => audio.indexOf(s.packet.payload)),
    [0, 1],
    'two frames out',
  )
  pacer.pause()
  const paused = run(pacer, clock, 100)
  t.ok(paused.length === 3 && paused.every((s) => s.packet.payload === silence), 'paused: silence in every slot, the stream goes on')
  t.equal(pacer.queued, 4, 'nothing dropped')
  pacer.resume()
  const after = run(pacer, clock, 140)
  t.same(
    after.map((s) => audio.indexOf(s.packet.payload)),
    [2, 3],
    'resumed with the next frame, none skipped or repeated',
  )
  t.same(
    [...before, ...paused, ...after].map((s) => s.packet.sequence),
    [0, 1, 2, 3, 4, 5, 6],
    'one contiguous stream',
  )
  pacer.pause()
  t.equal(pacer.clear(), 2, 'a clear while paused drops what was held')
  t.notOk(pacer.paused, 'and ends the pause')
})

t.test('comfort noise: one CN packet when the audio stops, one a refresh later, the talkspurt after it marked', async (t) => {
  const clock = { now: 0 }
  const cn = { payloadType: 13, payload: Buffer.from([70]), refreshSlots: 50 }
  const pacer = new RtpPacer({
    now: () => clock.now,
    payloadType: 0,
    silence: Buffer.alloc(160, 0xff),
    comfortNoise: cn,
    initialTimestamp: 0,
  })
  for (const f of frames(3)) pacer.enqueue(f)
  // 3 frames of audio, then 117 idle slots (2.34 s).
  const first = run(pacer, clock, 2400)
  t.same(
    first.map((s) => [s.at, s.packet.payloadType, s.packet.marker, s.packet.timestamp]),
    [
      [0, 0, true, 0],
      [20, 0, false, 160],
      [40, 0, false, 320],
      [60, 13, false, 480],
      [1060, 13, false, 8480],
      [2060, 13, false, 16480],
    ],
    'CN right after the audio, then once every 50 idle slots; the timestamp runs on through the pause',
  )
  t.same(first[3]!.packet.payload, Buffer.from([70]), 'the noise level')
  t.same(
    first.map((s) => s.packet.sequence - first[0]!.packet.sequence),
    [0, 1, 2, 3, 4, 5],
    'no sequence numbers skipped: the pause sends nothing',
  )
  t.same([pacer.stats.comfortNoise, pacer.stats.sent, pacer.stats.idle], [3, 6, 117])

  for (const f of frames(2)) pacer.enqueue(f)
  const talk = run(pacer, clock, 2460)
  t.same(
    talk.map((s) => [s.packet.payloadType, s.packet.marker]),
    [
      [0, true],
      [0, false],
      [13, false],
    ],
    'the next talkspurt starts with the marker; CN again as soon as it ends',
  )

  // A stall of 300 ms in the pause: its skipped slots count toward the refresh, which stays a second after the last CN.
  const lastCn = talk.at(-1)!.at
  run(pacer, clock, lastCn + 400)
  clock.now += 300
  const afterStall = run(pacer, clock, lastCn + 1100)
  t.same(
    afterStall.map((s) => s.at - lastCn),
    [1000],
    'the refresh a second after the last CN, the stall counted',
  )

  pacer.setComfortNoise(undefined)
  const steady = run(pacer, clock, clock.now + 100)
  t.ok(
    steady.length === 5 && steady.every((s) => s.packet.payloadType === 0 && s.packet.payload[0] === 0xff),
    'without comfort noise (a re-INVITE dropped CN): a silence frame in every slot',
  )
})

t.test('comfort noise: a digit ends the pause like audio, and a pause from the first slot starts with CN', async (t) => {
  const clock = { now: 0 }
  const cn = { payloadType: 105, payload: Buffer.from([70]), refreshSlots: 5 }
  const pacer = new RtpPacer({ now: () => clock.now, payloadType: 0, telephoneEventPayloadType: 101, comfortNoise: cn })
  const quiet = run(pacer, clock, 200)
  t.same(
    quiet.map((s) => s.at),
    [0, 100],
    'CN at once, then every 5 idle slots (a dynamic CN payload type)',
  )
  t.ok(quiet.every((s) => s.packet.payloadType === 105))
  pacer.enqueueDigit('5', 40)
  const digit = run(pacer, clock, 400)
  const types = digit.map((s) => s.packet.payloadType)
  t.equal(types[0], 101, 'the digit goes out in the next slot')
  t.equal(types[types.lastIndexOf(101) + 1], 105, 'CN right after the digit, not a refresh later')
})
