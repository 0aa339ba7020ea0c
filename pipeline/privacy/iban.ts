import type { DetectedSpan } from './redaction-span.js'

// IBAN lengths by country (SWIFT IBAN registry), for the countries a contact centre is likely to hear.
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24,
  AE: 23,
  AT: 20,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BR: 29,
  CH: 21,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  EE: 20,
  ES: 24,
  FI: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IS: 26,
  IT: 27,
  KW: 30,
  KZ: 20,
  LB: 28,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  ME: 22,
  MT: 31,
  MU: 30,
  NL: 18,
  NO: 15,
  PK: 24,
  PL: 28,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  SA: 24,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  TN: 24,
  TR: 26,
  UA: 29,
  VG: 24,
}

const START = /\b([A-Za-z]{2})(\d{2})/g

/** ISO 13616 check: move the first four characters to the end, letters to 10..35, the number mod 97 is 1. */
export function passesIbanCheck(iban: string): boolean {
  const moved = iban.slice(4) + iban.slice(0, 4)
  let rest = 0
  for (const ch of moved) {
    const code = ch.charCodeAt(0)
    const value = code >= 65 ? code - 55 : code - 48
    rest = value >= 10 ? (rest * 100 + value) % 97 : (rest * 10 + value) % 97
  }
  return rest === 1
}

/**
 * IBANs written in the text ("DE89 3704 0044 0532 0130 00", "GB29NWBK60161331926819"): a known country code,
 * two check digits, exactly the country's length of letters and digits (single spaces between groups allowed)
 * ending at a word boundary, and the mod-97 check. Spelled-out IBANs ("D E eight nine...") are not read.
 */
export function findIbans(text: string): DetectedSpan[] {
  const spans: DetectedSpan[] = []
  for (const m of text.matchAll(START)) {
    const country = m[1]!.toUpperCase()
    const length = IBAN_LENGTHS[country]
    if (length === undefined) continue
    let iban = country + m[2]
    let i = m.index + 4
    while (iban.length < length && i < text.length) {
      const ch = text[i]!
      if (ch === ' ' && /[A-Za-z0-9]/.test(text[i + 1] ?? '') && text[i - 1] !== ' ') {
        i++
        continue
      }
      if (!/[A-Za-z0-9]/.test(ch)) break
      iban += ch.toUpperCase()
      i++
    }
    if (iban.length === length && !/[A-Za-z0-9]/.test(text[i] ?? '') && passesIbanCheck(iban)) {
      spans.push({ kind: 'iban', start: m.index, end: i })
    }
  }
  return spans
}

const TAIL = /\b([A-Za-z]{2})\d{2}(?: ?[A-Za-z0-9])*[ ]?$/

/**
 * The IBAN `text` ends with (a known country code, two check digits, then letters and digits): where it starts
 * and whether it has its country's length yet. The streaming redactor holds an incomplete one for the next piece.
 */
export function ibanTail(text: string): { start: number; complete: boolean } | undefined {
  const m = TAIL.exec(text)
  if (m === null) return undefined
  const length = IBAN_LENGTHS[m[1]!.toUpperCase()]
  if (length === undefined) return undefined
  return { start: m.index, complete: m[0].replaceAll(' ', '').length >= length }
}

/** True when `context` ends in a country code and check digits ("DE89 "): the digits after them are an IBAN's. */
export function endsInIbanStart(context: string): boolean {
  const m = /\b([A-Za-z]{2})\d{2}\s*$/.exec(context)
  return m !== null && IBAN_LENGTHS[m[1]!.toUpperCase()] !== undefined
}
