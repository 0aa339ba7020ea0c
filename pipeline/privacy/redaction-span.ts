import type { RedactionKind } from './redaction-options.js'

/** A detected span in the input text, before any replacement. */
export interface DetectedSpan {
  readonly kind: RedactionKind
  /** Offsets in the input, end exclusive. */
  readonly start: number
  readonly end: number
}

/** A replaced span: where it was in the input and where its marker is in the output (end exclusive). */
export interface RedactionSpan {
  readonly kind: RedactionKind
  readonly start: number
  readonly end: number
  readonly outputStart: number
  readonly outputEnd: number
}

/** The result of a redaction: the text with markers, and the spans replaced. */
export interface RedactionResult {
  readonly text: string
  readonly spans: readonly RedactionSpan[]
}
