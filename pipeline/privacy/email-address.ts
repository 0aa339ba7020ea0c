import type { DetectedSpan } from './redaction-span.js'

const TLD =
  'com|org|net|edu|gov|mil|int|io|co|uk|us|ca|de|fr|es|it|nl|be|ch|at|se|no|dk|fi|ie|pl|pt|au|nz|in|jp|br|mx|eu|info|biz|me|ai|app|dev'
const DOT = '(?:\\s+dot\\s+|\\.)'
const LOCAL_JOIN = '(?:\\s+(?:dot|underscore|dash|hyphen|plus)\\s+|[._+-])'

const WRITTEN = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b/g
// "john dot smith at example dot com": the local part is the words joined by "dot", "underscore"... right
// before " at "; the domain must end in a known top-level domain, so "meet me at the office" never matches.
const SPOKEN = new RegExp(
  `\\b[A-Za-z0-9]+(?:${LOCAL_JOIN}[A-Za-z0-9]+)*\\s+at\\s+[A-Za-z0-9-]+(?:${DOT}[A-Za-z0-9-]+)*?${DOT}(?:${TLD})\\b(?!${DOT}[A-Za-z])`,
  'gi',
)

/** Email addresses, written ("john.smith@example.com") or said ("john dot smith at example dot com"). */
export function findEmails(text: string): DetectedSpan[] {
  const spans: DetectedSpan[] = []
  // Both patterns rescan from every start; most turns hold neither "@" nor "at", so skip them outright.
  if (text.includes('@')) for (const m of text.matchAll(WRITTEN)) spans.push({ kind: 'email', start: m.index, end: m.index + m[0].length })
  if (/\sat\s/i.test(text)) for (const m of text.matchAll(SPOKEN)) spans.push({ kind: 'email', start: m.index, end: m.index + m[0].length })
  return spans
}
