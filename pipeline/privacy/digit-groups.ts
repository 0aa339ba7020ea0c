import type { DigitGroup } from './digit-runs.js'

/** The digits of groups, joined. */
export function digitsOf(groups: readonly DigitGroup[]): string {
  let out = ''
  for (const g of groups) out += g.digits
  return out
}

/** Start offset of the first digit of groups. */
export function groupsStart(groups: readonly DigitGroup[]): number {
  return groups[0]!.ranges[0]![0]
}

/** End offset (exclusive) of the last digit of groups. */
export function groupsEnd(groups: readonly DigitGroup[]): number {
  const last = groups[groups.length - 1]!
  return last.ranges[last.ranges.length - 1]![1]
}

/** The lower-cased text just before `start`, where keywords such as "social security" or "order" are said. */
export function contextBefore(text: string, start: number, chars = 48): string {
  return text.slice(Math.max(0, start - chars), start).toLowerCase()
}
