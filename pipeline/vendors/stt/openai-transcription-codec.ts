import type { SttWord } from './stt-stream.js'

/** A form field of a `multipart/form-data` body: text, or a file (its bytes in one or more pieces) with its name and content type. */
export type FormField =
  | { name: string; value: string }
  | { name: string; filename: string; contentType: string; data: Buffer | readonly Buffer[] }

/**
 * A `multipart/form-data` body (RFC 7578) with CRLF line ends, each part's `Content-Disposition` and, for files,
 * its `Content-Type`; the boundary must not occur in the data (a random one of 24+ characters does not, in practice).
 */
export function multipartBody(fields: readonly FormField[], boundary: string): Buffer {
  return Buffer.concat(multipartPieces(fields, boundary))
}

/** {@link multipartBody} as the pieces to write one after the other: a file's bytes are not copied. */
export function multipartPieces(fields: readonly FormField[], boundary: string): Buffer[] {
  const parts: Buffer[] = []
  for (const field of fields) {
    const name = field.name.replace(/["\r\n]/g, '')
    if ('data' in field) {
      const filename = field.filename.replace(/["\r\n]/g, '')
      parts.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\n` +
            `Content-Type: ${field.contentType}\r\n\r\n`,
        ),
        ...(Buffer.isBuffer(field.data) ? [field.data] : (field.data as readonly Buffer[])),
        Buffer.from('\r\n'),
      )
    } else {
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${field.value}\r\n`))
    }
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`))
  return parts
}

/** A transcription as the server returned it: its text and, from `verbose_json`, its words in seconds of the file. */
export interface Transcription {
  text: string
  words?: SttWord[]
}

/** Why a transcription body could not be read. */
export class TranscriptionFormatError extends Error {
  readonly code = 'vendor_protocol_error'
}

/**
 * Reads a `json` (`{text}`) or `verbose_json` (`{text, words: [{word, start, end}], segments}`) transcription body
 * (words inside `segments[]` when the top has none). whisper.cpp's whisper-server ends each segment's text with a
 * newline and lists tokens, not words, in `segments[].words` (" sour", "dough"): the text's line breaks become
 * spaces, and a piece that does not start with a space is joined to the word before it.
 * Throws {@link TranscriptionFormatError} on anything else (an HTML error page, a plain-text body).
 */
export function parseTranscription(body: string): Transcription {
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    throw new TranscriptionFormatError(`the server answered with something that is not JSON: ${JSON.stringify(body.slice(0, 80))}`)
  }
  if (typeof json !== 'object' || json === null || typeof (json as { text?: unknown }).text !== 'string') {
    throw new TranscriptionFormatError('the server answered JSON without a "text" string')
  }
  const record = json as { text: string; words?: unknown; segments?: unknown }
  // OpenAI puts the words at the top; some servers only inside each segment (`segments[].words`).
  let words = timedWords(record.words).flatMap((w) => (w.word.trim() === '' ? [] : [{ ...w, word: w.word.trim() }]))
  if (words.length === 0 && Array.isArray(record.segments)) {
    words = joinPieces((record.segments as Array<{ words?: unknown }>).flatMap((segment) => timedWords(segment?.words)))
  }
  return { text: record.text.replace(/\s*\n\s*/g, ' ').trim(), ...(words.length > 0 && { words }) }
}

/** The entries with a string `word` and numeric `start` and `end`, their text untouched. */
function timedWords(raw: unknown): SttWord[] {
  if (!Array.isArray(raw)) return []
  const out: SttWord[] = []
  for (const w of raw as Array<Record<string, unknown>>) {
    if (typeof w?.word !== 'string' || typeof w.start !== 'number' || typeof w.end !== 'number') continue
    out.push({ word: w.word, start: w.start, end: w.end })
  }
  return out
}

/**
 * Words from pieces that mark a word's start with a space (whisper.cpp's tokens; faster-whisper's words, which all
 * start with one, come through unchanged): a piece without a leading space continues the word before it.
 */
function joinPieces(pieces: readonly SttWord[]): SttWord[] {
  const spaced = pieces.some((p) => /^\s/.test(p.word))
  const out: SttWord[] = []
  for (const piece of pieces) {
    const text = piece.word.trim()
    if (text === '') continue
    const last = out.at(-1)
    if (spaced && last !== undefined && !/^\s/.test(piece.word)) {
      out[out.length - 1] = { word: last.word + text, start: last.start, end: Math.max(last.end, piece.end) }
    } else out.push({ word: text, start: piece.start, end: piece.end })
  }
  return out
}

/** One event of a `stream: true` transcription: more text, or the whole text at the end. */
export type TranscriptionStreamEvent = { type: 'delta'; delta: string } | { type: 'done'; text: string } | { type: 'other' }

/** Reads the `data` of one server-sent event of a streamed transcription (`transcript.text.delta` / `.done`). */
export function parseTranscriptionEvent(data: string): TranscriptionStreamEvent {
  let json: unknown
  try {
    json = JSON.parse(data)
  } catch {
    throw new TranscriptionFormatError(`a streamed transcription event is not JSON: ${JSON.stringify(data.slice(0, 80))}`)
  }
  const event = json as { type?: unknown; delta?: unknown; text?: unknown }
  if (event.type === 'transcript.text.delta' && typeof event.delta === 'string') return { type: 'delta', delta: event.delta }
  if (event.type === 'transcript.text.done' && typeof event.text === 'string') return { type: 'done', text: event.text.trim() }
  return { type: 'other' }
}

/** The message of OpenAI's error body `{error: {message, type, code}}`, or undefined when the body is not one. */
export function openAiErrorMessage(body: string): string | undefined {
  try {
    const json = JSON.parse(body) as { error?: { message?: unknown } | string }
    if (typeof json.error === 'string') return json.error
    if (typeof json.error?.message === 'string') return json.error.message
  } catch {
    return undefined
  }
  return undefined
}
