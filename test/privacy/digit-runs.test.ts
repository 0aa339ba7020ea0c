import t from 'tap'
import { findDigitRuns } from '../../pipeline/privacy/digit-runs.js'

const digits = (text: string) => findDigitRuns(text).map((r) => r.groups.map((g) => g.digits).join(''))

t.test('text with no digit and no number word holds no run (skipped before tokenizing)', async (t) => {
  t.same(digits('someone said hello, that is often so'), [], 'number words inside other words do not count')
  t.same(digits(''), [])
  t.same(digits('um, uh, hmm'), [], 'fillers alone')
})

t.test('a number word is found whatever touches it that is not a letter, in any case', async (t) => {
  t.same(digits('my card is four one one one'), ['4111'])
  t.same(digits('FOUR One one ONE'), ['4111'], 'case')
  t.same(digits('_four one one one'), ['4111'], 'an underscore is not a letter: the tokenizer reads a word after it')
  t.same(digits('call me at nine'), ['9'])
  t.same(digits('twenty-one'), ['21'])
  t.same(digits('4111 1111'), ['41111111'], 'digits')
})
