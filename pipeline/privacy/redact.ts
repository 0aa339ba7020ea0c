import { type DetectContext, detectSpans } from './detect-spans.js'
import { type RedactOptions, type ResolvedRedactOptions, resolveRedactOptions, switchOf } from './redaction-options.js'
import type { DetectedSpan, RedactionResult, RedactionSpan } from './redaction-span.js'

/** Replaces `spans` (sorted, not overlapping) of `text` by their markers. */
export function applySpans(text: string, spans: readonly DetectedSpan[], options: ResolvedRedactOptions): RedactionResult {
  let out = ''
  let at = 0
  const replaced: RedactionSpan[] = []
  for (const s of spans) {
    out += text.slice(at, s.start)
    const marker = options.marker(s.kind)
    replaced.push({ kind: s.kind, start: s.start, end: s.end, outputStart: out.length, outputEnd: out.length + marker.length })
    out += marker
    at = s.end
  }
  return { text: out + text.slice(at), spans: replaced }
}

/** The detected spans of the kinds switched on. */
export function enabledSpans(spans: readonly DetectedSpan[], options: ResolvedRedactOptions): DetectedSpan[] {
  return spans.filter((s) => options.redact[switchOf(s.kind)])
}

/**
 * Finds the sensitive spans of one utterance and replaces each by a marker (`[card]`, `[ssn]`...). Pure and
 * synchronous. Kinds that are off are still detected, so their digits are never misread as another kind.
 * A code or expiry counts only near a card: in the same text, or when `context.cardBefore` says the previous
 * utterance had one (the streaming redactor tracks that).
 */
export function redact(text: string, options: RedactOptions = {}, context: DetectContext = {}): RedactionResult {
  const resolved = resolveRedactOptions(options)
  return applySpans(text, enabledSpans(detectSpans(text, context).spans, resolved), resolved)
}
