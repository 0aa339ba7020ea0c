import t from 'tap'
import { JitterBuffer } from '../../transports/sip/media/jitter-buffer.js'

const SILENCE = 0xff

/** A 160-byte frame whose every byte is `n` (never 0xff), so the output shows which packet it came from. */
const frame = (n: number, bytes = 160): Buffer => Buffer.alloc(bytes, n % 250)

function setup(options: { depthMs?: number; maxPackets?: number } = {}) {
  const clock = { now: 0 }
  const jb = new JitterBuffer({ now: () => clock.now, silenceByte: SILENCE, ...options })
  /** Pops `n` frames, 20 ms apart, and names each by its first byte ('-' for silence). */
  const pop = (n: number): string[] =>
    Array.from({ length: n }, () => {
      clock.now += 20
      const f = jb.pop()
      if (f.length !== 160) throw new Error(`frame of ${f.length} bytes`)
      return f[0] === SILENCE ? '-' : String(f[0])
    })
  return { clock, jb, pop }
}

t.test('in-order packets play after the depth is buffered, one 160-byte frame per pop', async (t) => {
  const { jb, pop } = setup({ depthMs: 60 })
  jb.push({ ssrc: 1, sequence: 10, payload: frame(10) })
  jb.push({ ssrc: 1, sequence: 11, payload: frame(11) })
  t.same(pop(1), ['-'], 'still filling: 40 ms of 60 buffered')
  jb.push({ ssrc: 1, sequence: 12, payload: frame(12) })
  t.same(pop(3), ['10', '11', '12'])
  t.same(pop(1), ['-'], 'ran dry')
  t.same(jb.stats, { received: 3, played: 3, duplicates: 0, late: 0, lost: 0, underruns: 1, overflow: 0, resets: 0 })
})

t.test('reordered packets come out in order; duplicates are dropped and counted', async (t) => {
  const { jb, pop } = setup()
  for (const seq of [3, 1, 2, 2, 5, 4, 1]) jb.push({ ssrc: 1, sequence: seq, payload: frame(seq) })
  t.same(pop(5), ['1', '2', '3', '4', '5'])
  t.equal(jb.stats.duplicates, 2)
  t.same(jb.push({ ssrc: 1, sequence: 5, payload: frame(5) }), 'duplicate', 'a packet already played is a duplicate')
})

t.test('a gap with later packets waiting becomes silence; the missing packet arriving after its turn is late', async (t) => {
  const { jb, pop } = setup()
  for (const seq of [1, 2, 4, 5]) jb.push({ ssrc: 1, sequence: seq, payload: frame(seq) })
  t.same(pop(2), ['1', '2'])
  t.same(pop(1), ['-'], '3 is lost')
  t.equal(jb.push({ ssrc: 1, sequence: 3, payload: frame(3) }), 'late')
  t.same(pop(2), ['4', '5'])
  t.same([jb.stats.lost, jb.stats.late], [1, 1])
})

t.test('sequence numbers wrap around 65535 -> 0', async (t) => {
  const { jb, pop } = setup()
  for (const seq of [65534, 0, 65535, 1])
    jb.push({ ssrc: 7, sequence: seq, payload: frame(seq === 0 ? 200 : seq === 1 ? 201 : seq - 65300) })
  t.same(pop(4), ['234', '235', '200', '201'], '65534, 65535, 0, 1')
  t.equal(jb.stats.late, 0)
})

t.test('a short talkspurt is not held forever: playout starts when the first packet has waited the depth', async (t) => {
  const { clock, jb, pop } = setup({ depthMs: 60 })
  jb.push({ ssrc: 1, sequence: 1, payload: frame(1) })
  t.same(pop(2), ['-', '-'])
  clock.now += 20
  t.same(pop(2), ['1', '-'])
})

t.test('after silence suppression the next talkspurt fills up again and plays', async (t) => {
  const { jb, pop } = setup()
  for (const seq of [1, 2, 3]) jb.push({ ssrc: 1, sequence: seq, payload: frame(seq) })
  t.same(pop(6), ['1', '2', '3', '-', '-', '-'])
  for (const seq of [20, 21, 22]) jb.push({ ssrc: 1, sequence: seq, payload: frame(seq) })
  t.same(pop(3), ['20', '21', '22'], 'no packets counted late or lost for the pause')
  t.same([jb.stats.late, jb.stats.lost], [0, 0])
})

t.test('a new SSRC or a sender that jumps backwards resets the buffer', async (t) => {
  const { jb, pop } = setup()
  for (const seq of [100, 101, 102]) jb.push({ ssrc: 1, sequence: seq, payload: frame(seq) })
  t.same(pop(3), ['100', '101', '102'])
  for (const seq of [50, 51, 52]) jb.push({ ssrc: 2, sequence: seq, payload: frame(seq) })
  t.same(pop(3), ['50', '51', '52'], 'a new SSRC starts over')
  t.equal(jb.stats.resets, 1)
  const results = [10, 11, 12, 13, 14, 15, 16, 17, 18].map((seq) => jb.push({ ssrc: 2, sequence: seq, payload: frame(seq) }))
  t.same(results.slice(0, 7), Array(7).fill('late'))
  t.equal(results[7], 'queued', 'the eighth "late" packet in a row is a restart: followed')
  t.equal(jb.stats.resets, 2)
  t.same(pop(4), ['-', '-', '17', '18'], 'filling up again, then the new position plays')
})

t.test('bounded: beyond maxPackets the oldest is dropped and counted', async (t) => {
  const { jb, pop } = setup({ maxPackets: 5 })
  const results = Array.from({ length: 8 }, (_, i) => jb.push({ ssrc: 1, sequence: i, payload: frame(i + 1) }))
  t.equal(jb.size, 5)
  t.equal(jb.stats.overflow, 3)
  t.same(results, Array(8).fill('queued'))
  t.same(pop(5), ['4', '5', '6', '7', '8'])
})

t.test('30 ms packets still come out as 20 ms frames', async (t) => {
  const { jb, clock } = setup()
  for (const seq of [1, 2, 3]) jb.push({ ssrc: 1, sequence: seq, payload: frame(seq, 240) })
  const out: number[] = []
  for (let i = 0; i < 4; i++) {
    clock.now += 20
    const f = jb.pop()
    out.push(f.length, f[0]!, f[159]!)
  }
  t.same(out, [160, 1, 1, 160, 1, 2, 160, 2, 2, 160, 3, 3], '720 bytes = four and a half frames, in order')
})
