import t from 'tap'
import { parseByteRange } from '../../api/http/byte-range.js'

t.test('one byte range against a 1000-byte file', async (t) => {
  t.same(parseByteRange(undefined, 1000), { kind: 'whole' })
  t.same(parseByteRange('bytes=0-99', 1000), { kind: 'range', start: 0, end: 99 })
  t.same(parseByteRange('bytes=900-', 1000), { kind: 'range', start: 900, end: 999 })
  t.same(parseByteRange('bytes=-100', 1000), { kind: 'range', start: 900, end: 999 })
  t.same(parseByteRange('bytes=-5000', 1000), { kind: 'range', start: 0, end: 999 }, 'a suffix longer than the file is all of it')
  t.same(parseByteRange('bytes=990-5000', 1000), { kind: 'range', start: 990, end: 999 }, 'the end is clipped')
})

t.test('unsatisfiable and ignored ranges', async (t) => {
  t.same(parseByteRange('bytes=1000-', 1000), { kind: 'unsatisfiable' }, 'starts past the end')
  t.same(parseByteRange('bytes=50-10', 1000), { kind: 'unsatisfiable' }, 'ends before it starts')
  t.same(parseByteRange('bytes=abc', 1000), { kind: 'unsatisfiable' }, 'malformed')
  t.same(parseByteRange('bytes=-0', 1000), { kind: 'unsatisfiable' }, 'an empty suffix')
  t.same(parseByteRange('bytes=0-1,5-6', 1000), { kind: 'whole' }, 'several ranges: the whole file')
  t.same(parseByteRange('items=0-1', 1000), { kind: 'whole' }, 'another unit is ignored')
})
