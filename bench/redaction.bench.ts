import { redact } from '../pipeline/privacy/redact.js'
import { createRedactor, redactWords } from '../pipeline/privacy/streaming-redactor.js'
import { fmt, throughput, type BenchOptions, type BenchRow } from './bench-util.js'

const ALL_ON = { redact: { cards: true, ssn: true, iban: true, email: true, phone: true } }

// Typical caller turns: most hold no number at all; the ones that matter hold a card, said as digits or words.
const TURNS: [string, string][] = [
  ['plain (22 words)', 'Hi, I was hoping you could help me change the delivery address on my last order, it is going to my old flat.'],
  ['order + time + price', 'My order 123456789 was meant to arrive at 7 30 and it cost $1,234.56, can you check it for me please?'],
  ['card in digits + code', 'Sure, my card number is 4111 1111 1111 1111, it expires 08/27 and the security code is 123.'],
  ['card in words', `my card is ${'four one one one '.repeat(3)}four one one one and the code is one two three`],
  ['email + phone', 'You can reach me at john dot smith at example dot com or on (415) 555-0132 after six.'],
]

/** Microseconds of CPU per caller turn: `redact` with every kind on, the streaming form, and the word mapping. */
export async function bench({ repeats }: BenchOptions): Promise<BenchRow[]> {
  const rows: BenchRow[] = []
  const row = (name: string, impl: string, words: number, rate: { best: number; median: number }): void => {
    rows.push({ turn: name, impl, words, 'us/turn best': fmt(1e6 / rate.best), 'us/turn median': fmt(1e6 / rate.median) })
  }
  for (const [name, text] of TURNS) {
    const words = text.split(' ')
    row(name, 'redact', words.length, await throughput(1, () => redact(text, ALL_ON), { repeats, minMs: 200 }))
    // The turn as three STT segments through a fresh streaming redactor, flushed at the end.
    const third = Math.ceil(words.length / 3)
    const segments = [0, 1, 2].map((i) => words.slice(i * third, (i + 1) * third).join(' '))
    const streamed = (): void => {
      const r = createRedactor(ALL_ON)
      for (const s of segments) r.push(s)
      r.flush()
    }
    row(name, 'stream (3 segments)', words.length, await throughput(1, streamed, { repeats, minMs: 200 }))
    const timed = words.map((word, i) => ({ word, start: i * 0.3, end: i * 0.3 + 0.25 }))
    row(name, 'timed words', words.length, await throughput(1, () => redactWords(timed, ALL_ON), { repeats, minMs: 200 }))
  }
  return rows
}
