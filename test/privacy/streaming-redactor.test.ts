import t from 'tap'
import { redact } from '../../pipeline/privacy/redact.js'
import { createRedactor, MAX_HELD_PUSHES, type RedactedPiece } from '../../pipeline/privacy/streaming-redactor.js'

function texts(pieces: RedactedPiece[]): string[] {
  return pieces.map((p) => p.text)
}

t.test('a card split across two segments is one card', async (t) => {
  const r = createRedactor()
  const first = r.push('my card number is 4111 1111')
  t.equal(first.text, 'my card number is ', 'the words before the number go out at once')
  const second = r.push('1111 1111')
  t.equal(second.text, '', 'the number may still go on: held')
  const third = r.push('thanks')
  t.equal(third.text, '[card] thanks', 'decided when a word follows')
  t.strictSame(third.spans, [{ kind: 'card', start: 18, end: 37, outputStart: 18, outputEnd: 24 }], 'offsets in the stream')
  t.equal(r.flush().text, '')
})

t.test('the pieces concatenate to the redacted stream', async (t) => {
  const segments = [
    'hello',
    'my social is 123',
    '45 6789',
    'and my card',
    'four one one one one one one one',
    'one one one one one one one one',
    'bye',
  ]
  const r = createRedactor()
  const pieces = [...segments.map((s) => r.push(s)), r.flush()]
  const whole = redact(segments.join(' '))
  t.equal(texts(pieces).join(''), whole.text)
  t.equal(whole.text, 'hello my social is [ssn] and my card [card] bye')
  t.strictSame(
    pieces.flatMap((p) => p.spans),
    whole.spans,
  )
})

t.test('flush decides what is held', async (t) => {
  const r = createRedactor()
  t.equal(r.push('it is 4111 1111 1111 1111').text, 'it is ')
  t.equal(r.flush().text, '[card]')
  t.equal(r.flush().text, '', 'twice is harmless')
})

t.test(`a number is held over at most ${MAX_HELD_PUSHES} pushes`, async (t) => {
  const r = createRedactor()
  const out = ['1', '2', '3', '4'].map((s) => r.push(s).text)
  t.strictSame(out, ['', '', '', '1 2 3 4'])
})

t.test('more digits than a card are decided at once', async (t) => {
  const r = createRedactor()
  t.equal(r.push('4111 1111 1111 1111 0000 0000').text, '[card] 0000 0000')
})

t.test('a code counts in the same or the next segment after a card, not later', async (t) => {
  const r = createRedactor()
  t.equal(r.push('card 4111 1111 1111 1111 ok').text, 'card [card] ok')
  t.equal(r.push('the code is 123 right').text, ' the code is [cvc] right')
  const late = createRedactor()
  late.push('card 4111 1111 1111 1111 ok')
  late.push('wait a moment')
  t.equal(late.push('the code is 123 right').text, ' the code is 123 right')
})

t.test('switched-off kinds pass through; markers can be chosen', async (t) => {
  const off = createRedactor({ redact: { cards: false } })
  t.equal(off.push('card 4111 1111 1111 1111 ok').text, 'card 4111 1111 1111 1111 ok')
  const stars = createRedactor({ marker: (kind) => `<${kind.toUpperCase()}>`, redact: { email: true } })
  t.equal(stars.push('mail john dot smith at example dot com now').text, 'mail <EMAIL> now')
})

t.test('an IBAN said across two segments is held until complete', async (t) => {
  const r = createRedactor({ redact: { iban: true } })
  t.equal(r.push('my iban is DE89 3704 0044').text, 'my iban is ')
  t.equal(r.push('0532 0130 00 thanks').text, '[iban] thanks')
})

t.test('decidedTo tells how much of the input is decided', async (t) => {
  const r = createRedactor()
  const first = r.push('my card number is 4111 1111')
  t.equal(first.decidedTo, 'my card number is '.length, 'the held number is not decided')
  const second = r.push('1111 1111')
  t.equal(second.decidedTo, first.decidedTo, 'still held')
  const third = r.push('thanks')
  t.equal(third.decidedTo, 'my card number is 4111 1111 1111 1111 thanks'.length, 'all decided once a word follows')
  t.equal(r.flush().decidedTo, third.decidedTo)
})
