import t from 'tap'
import { privacySchema } from '../../pipeline/config/privacy-schema.js'
import type { RedactedWord } from '../../pipeline/privacy/timed-words.js'
import { TurnRedactor, type TurnToStore } from '../../gateway/sessions/transcript/turn-redactor.js'

type TranscriptTurn = TurnToStore['turn']

function turn(n: number, userMessage: string | null, assistantMessage: string | null = `reply ${n}`): TranscriptTurn {
  return { turnId: `t${n}`, timestamp: new Date(n * 1000), userMessage, assistantMessage, latencyMs: null }
}

/** A finished turn with nothing else to say. */
function plain(n: number, userMessage: string | null, assistantMessage?: string | null) {
  return { turn: turn(n, userMessage, assistantMessage) }
}

function setup(privacy: unknown = {}) {
  const stored: TranscriptTurn[] = []
  const silenced: RedactedWord[] = []
  const r = new TurnRedactor({
    privacy: privacySchema.parse(privacy),
    store: (t) => stored.push(t),
    silence: (w) => silenced.push(...w),
  })
  return { r, stored, silenced }
}

t.test('a turn without a number is stored at once, redacted', async (t) => {
  const { r, stored } = setup()
  r.add(plain(1, 'my social is 123-45-6789 thanks', 'I will not repeat 4111 1111 1111 1111'))
  t.equal(stored.length, 1)
  t.equal(stored[0]?.userMessage, 'my social is [ssn] thanks')
  t.equal(stored[0]?.assistantMessage, 'I will not repeat [card]', "the agent's text is redacted too")
})

t.test('a card split across two turns is one card; the turns are stored in order once it is decided', async (t) => {
  const { r, stored } = setup()
  r.add(plain(1, 'my card is 4111 1111'))
  t.equal(stored.length, 0, 'the first turn waits: its number may go on')
  r.add(plain(2, null, 'go on'))
  t.equal(stored.length, 0, 'a turn without caller text waits behind it (order)')
  r.add(plain(3, '1111 1111 thanks'))
  t.strictSame(
    stored.map((s) => [s.turnId, s.userMessage, s.assistantMessage]),
    [
      ['t1', 'my card is [card]', 'reply 1'],
      ['t2', null, 'go on'],
      ['t3', '[card] thanks', 'reply 3'],
    ],
    'the marker shows in both turns, no digit is stored',
  )
})

t.test('flush stores a turn whose number never went on', async (t) => {
  const { r, stored } = setup()
  r.add(plain(1, 'call me at 4111 1111 1111 1111'))
  t.equal(stored.length, 0)
  t.equal(r.pending, 1)
  r.flush()
  t.equal(stored[0]?.userMessage, 'call me at [card]')
  t.equal(r.pending, 0)
})

t.test('levels: full keeps the text as said, none keeps no text', async (t) => {
  const full = setup({ transcripts: 'full' })
  full.r.add(plain(1, 'card 4111 1111 1111 1111 ok'))
  t.equal(full.stored[0]?.userMessage, 'card 4111 1111 1111 1111 ok')
  const none = setup({ transcripts: 'none' })
  none.r.add(plain(1, 'card 4111 1111 1111 1111 ok', 'fine'))
  t.strictSame([none.stored[0]?.userMessage, none.stored[0]?.assistantMessage], [null, null])
  t.equal(none.stored[0]?.turnId, 't1', 'the turn is kept (timing, latency), its text is not')
})

t.test('a paused turn keeps no text and does not join the stream', async (t) => {
  const { r, stored } = setup()
  r.add({ turn: turn(1, 'it is 4111 1111 1111 1111 expires 08/27'), paused: true })
  r.add(plain(2, 'done'))
  t.strictSame(
    stored.map((s) => [s.userMessage, s.assistantMessage]),
    [
      [null, null],
      ['done', 'reply 2'],
    ],
  )
})

t.test('switches: a kind that is off is kept', async (t) => {
  const { r, stored } = setup({ redact: { ssn: false, email: true } })
  r.add(plain(1, 'ssn 123-45-6789 mail john.smith@example.com ok'))
  t.equal(stored[0]?.userMessage, 'ssn 123-45-6789 mail [email] ok')
})

t.test('the redacted words are told, with their timings, across turns', async (t) => {
  const { r, silenced } = setup()
  const words = (text: string, at: number) => text.split(' ').map((word, i) => ({ word, start: at + i * 0.3, end: at + i * 0.3 + 0.25 }))
  r.add({ turn: turn(1, 'card four one one one'), userWords: words('card four one one one', 1) })
  t.equal(silenced.length, 0, 'nothing is decided yet')
  r.add({
    turn: turn(2, 'one one one one one one one one one one one one'),
    userWords: words('one one one one one one one one one one one one', 10),
  })
  r.add({ turn: turn(3, 'thanks'), userWords: words('thanks', 20) })
  t.equal(silenced.length, 16, 'the sixteen words of the card')
  t.equal(silenced[0]?.start, 1.3, 'from the first digit word of the first turn')
  t.equal(silenced.at(-1)?.end, 10 + 11 * 0.3 + 0.25, 'to the last digit word of the second')
  t.ok(silenced.every((w) => w.kind === 'card'))
})

t.test('bounded: too many turns behind a held number decide it', async (t) => {
  const stored: TranscriptTurn[] = []
  const r = new TurnRedactor({ privacy: privacySchema.parse({}), store: (x) => stored.push(x), maxPending: 3 })
  r.add(plain(1, 'number 4111 1111'))
  for (let i = 2; i <= 4; i++) r.add(plain(i, null))
  t.equal(stored.length, 4, 'decided as it stands once the bound is passed')
  t.equal(r.pending, 0)
})
