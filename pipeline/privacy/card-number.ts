import type { DigitGroup } from './digit-runs.js'
import { digitsOf } from './digit-groups.js'
import { isCardNumber } from './luhn.js'

// Preferred lengths when several windows of one run pass: 16 is most cards, 15 Amex, 19 and 13 rarer.
const LENGTH_PREFERENCE = [16, 15, 19, 14, 13, 18, 17]

/**
 * A spoken group longer than a card ("four one one one ... one one one one one two three", card and code said
 * without a pause) is cut after its first 16 or 15 digits when those are a card. Cutting nowhere else keeps a
 * Luhn-invalid number from passing through one of its shorter windows.
 */
export function splitSpokenCards(groups: readonly DigitGroup[]): DigitGroup[] {
  const out: DigitGroup[] = []
  for (const g of groups) {
    if (!g.spoken || g.digits.length <= 16 || (g.digits.length <= 19 && isCardNumber(g.digits))) {
      out.push(g)
      continue
    }
    const cut = [16, 15].find((n) => isCardNumber(g.digits.slice(0, n)) && g.ranges[n - 1]![0] !== g.ranges[n]![0])
    if (cut === undefined) {
      out.push(g)
      continue
    }
    out.push({ digits: g.digits.slice(0, cut), ranges: g.ranges.slice(0, cut), spoken: true })
    out.push({ digits: g.digits.slice(cut), ranges: g.ranges.slice(cut), spoken: true })
  }
  return out
}

/**
 * The groups [from, to) of a card number among `groups`, or undefined. Only whole groups count: a number is
 * never cut inside "4111" or inside a stretch of number words said without a pause. The whole run wins, then
 * the preferred lengths, then the earliest start.
 */
export function findCardGroups(groups: readonly DigitGroup[]): { from: number; to: number } | undefined {
  let best: { from: number; to: number; score: number } | undefined
  for (let from = 0; from < groups.length; from++) {
    let length = 0
    for (let to = from + 1; to <= groups.length; to++) {
      length += groups[to - 1]!.digits.length
      if (length > 19) break
      if (length < 13 || !isCardNumber(digitsOf(groups.slice(from, to)))) continue
      const score = from === 0 && to === groups.length ? -1 : LENGTH_PREFERENCE.indexOf(length)
      if (best === undefined || score < best.score) best = { from, to, score }
    }
  }
  return best === undefined ? undefined : { from: best.from, to: best.to }
}
