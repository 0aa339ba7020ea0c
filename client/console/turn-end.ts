/** Why a caller's turn ended when it did, in words (the stored `turn_end` reason). Pure: no DOM, tested in Node. */

const REASONS: Record<string, string> = {
  complete_answer: 'a complete short answer: ended soon after',
  complete_number: 'a complete number: ended soon after',
  base_timeout: 'the usual wait after the caller stopped',
  vendor_end_of_turn: "the speech recognizer's end of turn",
  typed: 'typed text',
}

const EXTENDED: Record<string, string> = {
  incomplete_number: 'the number was not complete yet',
  awaiting_number: 'a number was announced but not said yet',
  open_number: 'a number of unknown length',
  incomplete_date: 'the date had no year yet',
  trailing_conjunction: 'the caller stopped on a word like "and"',
  filler: 'the caller stopped on "um" or "let me see"',
  open_list: 'a list was left open',
  spelling: 'the caller was spelling',
}

/** `extended: incomplete_number` -> `waited longer: the number was not complete yet`; unknown reasons as they came. */
export function turnEndInWords(reason: string): string {
  const extended = /^extended: (.+)$/.exec(reason)
  if (extended !== null) return `waited longer: ${EXTENDED[extended[1] ?? ''] ?? extended[1]}`
  return REASONS[reason] ?? reason
}
