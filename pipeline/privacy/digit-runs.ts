import { NUMBER_WORD, readNumberWord } from './number-words.js'

/** Where one digit was said: the offsets of the word or digits that carry it (end exclusive). */
export type DigitRange = readonly [start: number, end: number]

/**
 * Digits said together: one token of digits ("4111"), or number words said without a pause mark between them
 * ("four one one one", "double five"). A comma or full stop ends a group but not the run.
 */
export interface DigitGroup {
  readonly digits: string
  /** One range per digit. */
  readonly ranges: readonly DigitRange[]
  readonly spoken: boolean
}

/** Groups said one after another, separated only by spaces, dashes, parentheses, commas, full stops or fillers. */
export interface DigitRun {
  readonly groups: readonly DigitGroup[]
  /** A "+" or "plus" said right before the first digit (international phone numbers). */
  readonly plusAt: number | undefined
  /** The run reaches the end of the text: more digits may follow in the next piece. */
  readonly open: boolean
}

interface Token {
  readonly type: 'digits' | 'word' | 'space' | 'punct' | 'blocker'
  readonly text: string
  readonly start: number
  readonly end: number
}

// Order matters: letters glued to digits ("DE89", "12th", "7pm") and formatted numbers ("1,234.56", "7:30",
// "12/28") are single tokens that end a run, so a price, a time, a date or a code is never part of a number.
const TOKEN = /([A-Za-z0-9]*(?:[A-Za-z]\d|\d[A-Za-z])[A-Za-z0-9]*)|(\d+(?:[.,:/]\d+)+)|(\d+)|([A-Za-z]+)|(\s+)|([\s\S])/g

const ANY_DIGIT = /\d/

// "212.555.0175" is how some vendors write a phone number; read it as three groups, not as a decimal.
const DOTTED_PHONE = /^\d{3}\.\d{3}\.\d{4}$/

function tokenize(text: string): Token[] {
  const tokens: Token[] = []
  for (const m of text.matchAll(TOKEN)) {
    const start = m.index
    if (m[2] !== undefined && DOTTED_PHONE.test(m[0])) {
      tokens.push(...tokenize(m[0].replaceAll('.', ' ')).map((t) => ({ ...t, start: t.start + start, end: t.end + start })))
      continue
    }
    const type = m[1] || m[2] ? 'blocker' : m[3] ? 'digits' : m[4] ? 'word' : m[5] ? 'space' : 'punct'
    tokens.push({ type, text: m[0], start, end: start + m[0].length })
  }
  return tokens
}

function isNumberToken(token: Token | undefined): boolean {
  if (token === undefined) return false
  if (token.type === 'digits') return true
  if (token.type !== 'word') return false
  const reading = readNumberWord(token.text.toLowerCase())
  return reading !== undefined && reading.type !== 'filler' && !(reading.type === 'unit' && reading.weak)
}

/** Every run of digits in `text`, said as digits or as number words, in order. */
export function findDigitRuns(text: string): DigitRun[] {
  // Most of what callers say holds no digit and no number word: no run, without tokenizing (a match object per
  // token; the tokenizer was 5% of what the gateway allocated at 300 calls, every transcript redacted twice).
  if (!ANY_DIGIT.test(text) && !NUMBER_WORD.test(text)) return []
  const tokens = tokenize(text)
  const runs: DigitRun[] = []
  let groups: DigitGroup[] = []
  let plusAt: number | undefined
  let spoken: { digits: string; ranges: DigitRange[] } | undefined
  let repeat: { times: number; start: number } | undefined
  let lastSignificant: Token | undefined

  const nextSignificant = (i: number, skipDash = false): [Token | undefined, number] => {
    let j = i + 1
    while (j < tokens.length && (tokens[j]!.type === 'space' || (skipDash && tokens[j]!.text === '-'))) j++
    return [tokens[j], j]
  }
  const closeGroup = (): void => {
    if (spoken !== undefined) groups.push({ digits: spoken.digits, ranges: spoken.ranges, spoken: true })
    spoken = undefined
  }
  const endRun = (open: boolean): void => {
    closeGroup()
    repeat = undefined
    if (groups.length > 0) runs.push({ groups, plusAt, open })
    groups = []
    plusAt = undefined
  }
  const beginIfNeeded = (): void => {
    if (groups.length > 0 || spoken !== undefined) return
    const last = lastSignificant
    plusAt = last !== undefined && (last.text === '+' || last.text.toLowerCase() === 'plus') ? last.start : undefined
  }
  const addSpoken = (digits: string, start: number, end: number): void => {
    beginIfNeeded()
    spoken ??= { digits: '', ranges: [] }
    for (const d of digits) {
      spoken.digits += d
      spoken.ranges.push([start, end])
    }
  }
  const inRun = (): boolean => groups.length > 0 || spoken !== undefined

  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!
    if (token.type === 'space') continue
    if (token.type === 'digits') {
      closeGroup()
      beginIfNeeded()
      repeat = undefined
      groups.push({ digits: token.text, ranges: Array.from(token.text, () => [token.start, token.end] as const), spoken: false })
    } else if (token.type === 'punct') {
      if (token.text === '-') {
        // "forty-one" and "4111-1111": a dash joins.
      } else if (',.;()'.includes(token.text)) {
        closeGroup()
      } else {
        endRun(false)
      }
    } else if (token.type === 'blocker') {
      endRun(false)
    } else {
      const reading = readNumberWord(token.text.toLowerCase())
      if (reading === undefined) {
        endRun(false)
      } else if (reading.type === 'filler') {
        if (inRun()) closeGroup()
      } else if (reading.type === 'repeat') {
        const [next] = nextSignificant(i)
        const nextReading = next?.type === 'word' ? readNumberWord(next.text.toLowerCase()) : undefined
        if (nextReading?.type === 'unit') repeat = { times: reading.times, start: token.start }
        else endRun(false)
      } else if (reading.type === 'unit') {
        const [next] = nextSignificant(i)
        if (reading.weak && !inRun() && repeat === undefined && !isNumberToken(next)) {
          endRun(false)
        } else {
          addSpoken(reading.digit.repeat(repeat?.times ?? 1), repeat?.start ?? token.start, token.end)
          repeat = undefined
        }
      } else if (reading.type === 'teen') {
        addSpoken(reading.digits, token.start, token.end)
      } else {
        const [next, j] = nextSignificant(i, true)
        const unit = next?.type === 'word' ? readNumberWord(next.text.toLowerCase()) : undefined
        if (unit?.type === 'unit' && !unit.weak && unit.digit !== '0') {
          addSpoken(reading.digit + unit.digit, token.start, next!.end)
          i = j
        } else {
          addSpoken(`${reading.digit}0`, token.start, token.end)
        }
      }
    }
    lastSignificant = tokens[i]
  }
  endRun(true)
  return runs
}

/** Start offset of a run's first digit. */
export function runStart(run: DigitRun): number {
  return run.groups[0]!.ranges[0]![0]
}
