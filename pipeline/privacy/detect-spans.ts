import { findCardGroups, splitSpokenCards } from './card-number.js'
import { findCardExtras, findSlashExpiries } from './card-extras.js'
import { type DigitGroup, type DigitRun, findDigitRuns, runStart } from './digit-runs.js'
import { contextBefore, digitsOf, groupsEnd, groupsStart } from './digit-groups.js'
import { findEmails } from './email-address.js'
import { endsInIbanStart, findIbans } from './iban.js'
import { isPhoneDigits } from './phone-number.js'
import type { DetectedSpan } from './redaction-span.js'
import { namedAsReference } from './reference-numbers.js'
import { isSsnGroups } from './ssn.js'

/** What the detector knows beyond the text itself. */
export interface DetectContext {
  /** A card number was said in the previous utterance, so a code or expiry in this one belongs to it. */
  readonly cardBefore?: boolean
  /**
   * Text before this offset is only context (for keywords such as "social" or "expires"): a card in it was
   * already counted for its own utterance and does not make this one "near a card" again.
   */
  readonly from?: number
}

/** Every sensitive span of `text`, of every kind, without overlaps, in order; and whether a card was said. */
export interface Detection {
  readonly spans: DetectedSpan[]
  readonly cardSeen: boolean
}

// When two detections overlap, the structural ones (an IBAN, an email address) win over digit readings.
const PRIORITY: Readonly<Record<DetectedSpan['kind'], number>> = { iban: 0, email: 1, card: 2, ssn: 3, phone: 4, expiry: 5, cvc: 6 }

interface Leftover {
  readonly groups: readonly DigitGroup[]
  readonly first: boolean
  readonly afterCard: boolean
}

function span(kind: DetectedSpan['kind'], groups: readonly DigitGroup[], start = groupsStart(groups)): DetectedSpan {
  return { kind, start, end: groupsEnd(groups) }
}

/** Cards first (they may sit inside a longer run), then each leftover stretch of the run read on its own. */
function cardsOf(run: DigitRun): { cards: DetectedSpan[]; leftovers: Leftover[] } {
  const cards: DetectedSpan[] = []
  const leftovers: Leftover[] = []
  const visit = (groups: readonly DigitGroup[], first: boolean, afterCard: boolean): void => {
    if (groups.length === 0) return
    const found = findCardGroups(groups)
    if (found === undefined) {
      leftovers.push({ groups, first, afterCard })
      return
    }
    visit(groups.slice(0, found.from), first, afterCard)
    cards.push(span('card', groups.slice(found.from, found.to)))
    visit(groups.slice(found.to), false, true)
  }
  visit(splitSpokenCards(run.groups), true, false)
  return { cards, leftovers }
}

function readLeftover(text: string, run: DigitRun, part: Leftover, cardNear: boolean): DetectedSpan[] {
  const start = groupsStart(part.groups)
  const context = contextBefore(text, part.first && run.plusAt !== undefined ? run.plusAt : start)
  const reference = namedAsReference(context)
  if (!reference && isSsnGroups(part.groups, context)) return [span('ssn', part.groups)]
  const plus = part.first && run.plusAt !== undefined
  if (!reference && isPhoneDigits(digitsOf(part.groups), plus)) {
    // "(415) 555-0132": the opening parenthesis goes with the number.
    const from = plus ? run.plusAt! : text[start - 1] === '(' ? start - 1 : start
    return [span('phone', part.groups, from)]
  }
  return cardNear ? findCardExtras(part.groups, context, part.afterCard) : []
}

/** Detects every kind in `text`; callers drop the kinds that are switched off. */
export function detectSpans(text: string, context: DetectContext = {}): Detection {
  const runs = findDigitRuns(text)
  const found: DetectedSpan[] = [...findIbans(text), ...findEmails(text)]
  // "DE89 3704 0044 ...": an IBAN's digits, valid or not, are not read as a card or a phone number.
  const perRun = runs.filter((run) => !endsInIbanStart(contextBefore(text, runStart(run), 8))).map((run) => ({ run, ...cardsOf(run) }))
  const from = context.from ?? 0
  const cardSeen = perRun.some((r) => r.cards.some((c) => c.start >= from))
  const cardNear = cardSeen || context.cardBefore === true
  for (const { run, cards, leftovers } of perRun) {
    found.push(...cards)
    for (const part of leftovers) found.push(...readLeftover(text, run, part, cardNear))
  }
  if (cardNear) found.push(...findSlashExpiries(text))
  return { spans: withoutOverlaps(found), cardSeen }
}

function withoutOverlaps(spans: DetectedSpan[]): DetectedSpan[] {
  const ranked = [...spans].sort((a, b) => PRIORITY[a.kind] - PRIORITY[b.kind] || a.start - b.start)
  const kept: DetectedSpan[] = []
  for (const s of ranked) if (!kept.some((k) => s.start < k.end && k.start < s.end)) kept.push(s)
  return kept.sort((a, b) => a.start - b.start)
}
