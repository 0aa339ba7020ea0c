import t from 'tap'
import { createRedactor, redactWords } from '../../pipeline/privacy/streaming-redactor.js'
import type { TimedWord } from '../../pipeline/privacy/timed-words.js'

// 300 ms per word, 250 ms of speech each, from `at` seconds.
function timed(text: string, at = 0): TimedWord[] {
  return text.split(' ').map((word, i) => ({ word, start: at + i * 0.3, end: at + i * 0.3 + 0.25 }))
}

t.test('the words of a spoken card number, with their timings', async (t) => {
  const words = timed('my card is four one one one one one one one one one one one one one one one thanks')
  const result = redactWords(words)
  t.equal(result.text, 'my card is [card] thanks')
  t.equal(result.words.length, 16)
  t.strictSame(result.words[0], { ...words[3], kind: 'card' }, 'the first redacted word is the first digit, timings as the STT gave them')
  t.strictSame(result.words.at(-1), { ...words[18], kind: 'card' })
  t.notOk(
    result.words.some((w) => w.word === 'thanks' || w.word === 'is'),
    'no word outside the number',
  )
})

t.test('silencing from the first to the last redacted word is within 40 ms of the number', async (t) => {
  const words = timed('call me on four one five five five five zero one three two ok', 12)
  const result = redactWords(words, { redact: { phone: true } })
  const first = result.words[0]!
  const last = result.words.at(-1)!
  t.ok(Math.abs(first.start - words[3]!.start) < 0.04 && Math.abs(last.end - words[12]!.end) < 0.04)
  t.equal(result.words.length, 10)
})

t.test('a card split across two segments: each decided piece names its words', async (t) => {
  const r = createRedactor()
  const a = timed('my card is 4111 1111', 0)
  const b = timed('1111 1111 thanks', 2)
  const first = r.push('my card is 4111 1111', a)
  t.strictSame(first.words, [], 'nothing decided yet')
  const second = r.push('1111 1111 thanks', b)
  t.strictSame(
    second.words.map((w) => [w.word, w.start]),
    [
      ['4111', a[3]!.start],
      ['1111', a[4]!.start],
      ['1111', b[0]!.start],
      ['1111', b[1]!.start],
    ],
  )
})

t.test('punctuated vendor words still map; a word missing from the text is skipped, not misplaced', async (t) => {
  const words: TimedWord[] = [
    { word: 'ssn', start: 0, end: 0.2 },
    { word: '123-45-6789.', start: 0.3, end: 1.5 },
  ]
  const result = redactWords(words)
  t.equal(result.text, 'ssn [ssn].')
  t.strictSame(
    result.words.map((w) => w.kind),
    ['ssn'],
  )
  const r = createRedactor()
  const piece = r.push('ssn 123-45-6789', [{ word: 'social', start: 0, end: 0.2 }, ...words.slice(1)])
  t.strictSame([...piece.words, ...r.flush().words], [], '"123-45-6789." is not in this text as given, so no word is claimed')
})
