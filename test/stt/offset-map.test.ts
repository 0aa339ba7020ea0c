import t from 'tap'
import { MAX_OFFSET_SEGMENTS, OffsetMap } from '../../pipeline/vendors/stt/offset-map.js'

t.test('contiguous pieces merge; a gap maps to the end of the piece before it', async (t) => {
  const m = new OffsetMap()
  t.equal(m.map(0), undefined, 'nothing known')
  m.add(0, 1000, 100)
  m.add(100, 1100, 100)
  m.add(300, 5000, 50) // 100 units of filler (300 - 200) the target does not have
  t.equal(m.map(150), 1150)
  t.equal(m.map(250), 1200, 'filler: the end of the audio before it')
  t.equal(m.map(320), 5020)
  t.equal(m.map(400), 5050, 'past the end: the end')
  m.clear()
  t.equal(m.map(10), undefined)
})

t.test('bounded: the oldest pieces are forgotten', async (t) => {
  const m = new OffsetMap()
  for (let i = 0; i <= MAX_OFFSET_SEGMENTS; i++) m.add(i * 10, i * 100, 5)
  t.equal(m.map(0), undefined, 'the first piece is gone')
  t.equal(m.map(10), 100)
})
