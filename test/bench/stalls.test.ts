import t from 'tap'
import { uncovered } from '../../bench/stalls.js'

t.test('a gateway stall counts only where no machine pause covers it', async (t) => {
  const s = { from: 100, to: 130 }
  t.equal(uncovered(s, []), 30, 'nothing shared')
  t.equal(
    uncovered(s, [
      { from: 0, to: 50 },
      { from: 200, to: 300 },
    ]),
    30,
    'pauses elsewhere',
  )
  t.equal(uncovered(s, [{ from: 90, to: 140 }]), 0, 'fully inside a pause')
  t.equal(uncovered(s, [{ from: 95, to: 110 }]), 20, 'overlapping the start')
  t.equal(uncovered(s, [{ from: 125, to: 135 }]), 25, 'overlapping the end')
  t.equal(
    uncovered(s, [
      { from: 105, to: 115 },
      { from: 110, to: 120 },
    ]),
    15,
    'overlapping pauses count once',
  )
  t.equal(
    uncovered(s, [
      { from: 110, to: 112 },
      { from: 120, to: 121 },
    ]),
    27,
    'two short pauses',
  )
})
