import { randomBytes } from 'node:crypto'
import { SseDecoder } from '../../agent/sse-decoder.js'
import { RequestDeadline } from '../../runtime/request-deadline.js'
import { VendorErrorCode, type VendorErrorCodeValue } from '../socket/vendor-errors.js'
import { postToSpeechServer } from './openai-http-post.js'
import {
  type FormField,
  multipartPieces,
  openAiErrorMessage,
  parseTranscription,
  parseTranscriptionEvent,
  type Transcription,
  TranscriptionFormatError,
} from './openai-transcription-codec.js'

/** A transcription response body larger than this is refused (a few minutes of verbose_json is ~100 kB). */
const MAX_BODY_CHARS = 1_000_000

/** What one `POST {base}/audio/transcriptions` sends besides the audio. */
export interface TranscriptionRequest {
  /** The server's base URL (`http://gpu-1:8000/v1`). */
  baseUrl: string
  /** Sent as `Authorization: Bearer ...` when not empty. */
  apiKey: string
  /** The segment as a WAV file (its header and its samples may be separate pieces). */
  wav: Buffer | readonly Buffer[]
  model: string
  language?: string | undefined
  prompt?: string | undefined
  temperature?: number | undefined
  /** Ask for `verbose_json` with word timestamps. */
  words: boolean
  /** Ask for `stream: true`; server-sent `transcript.text.delta` events then come to `onDelta` as the text so far. */
  stream: boolean
  onDelta?: (textSoFar: string) => void
  timeoutMs: number
  signal: AbortSignal
}

/** Why a transcription request failed: a stable code, a message naming the cause, and the HTTP status if any. */
export class TranscriptionError extends Error {
  constructor(
    readonly code: VendorErrorCodeValue,
    message: string,
    readonly status?: number,
  ) {
    super(message)
  }
}

/**
 * Posts one segment to `/audio/transcriptions` as OpenAI's `multipart/form-data` (`file`, `model`, `language`,
 * `prompt`, `temperature`, `response_format`, `timestamp_granularities[]`, `stream`) and reads the answer: JSON,
 * verbose JSON, or (when the server honours `stream`) server-sent events. Throws {@link TranscriptionError}.
 */
export async function requestTranscription(r: TranscriptionRequest): Promise<Transcription> {
  const fields: FormField[] = [
    { name: 'file', filename: 'segment.wav', contentType: 'audio/wav', data: r.wav },
    { name: 'model', value: r.model },
  ]
  if (r.language !== undefined) fields.push({ name: 'language', value: r.language })
  if (r.prompt !== undefined) fields.push({ name: 'prompt', value: r.prompt })
  if (r.temperature !== undefined) fields.push({ name: 'temperature', value: String(r.temperature) })
  // OpenAI streams only `json`/`text`, and words come only with `verbose_json`: streaming wins over word timings.
  const verbose = r.words && !r.stream
  fields.push({ name: 'response_format', value: verbose ? 'verbose_json' : 'json' })
  if (verbose) fields.push({ name: 'timestamp_granularities[]', value: 'word' })
  if (r.stream) fields.push({ name: 'stream', value: 'true' })
  const boundary = `----voxgate${randomBytes(12).toString('hex')}`
  const headers: Record<string, string> = { 'content-type': `multipart/form-data; boundary=${boundary}` }
  if (r.apiKey !== '') headers.authorization = `Bearer ${r.apiKey}`
  const deadline = new RequestDeadline(r.timeoutMs, [r.signal])
  const signal = deadline.signal
  try {
    const response = await postToSpeechServer(`${r.baseUrl}/audio/transcriptions`, headers, multipartPieces(fields, boundary), signal)
    if (response.status < 200 || response.status > 299) {
      const body = await boundedText(response.body)
      const detail = openAiErrorMessage(body) ?? body.slice(0, 200)
      throw new TranscriptionError(statusCode(response.status), `HTTP ${response.status}: ${detail}`.trim(), response.status)
    }
    if (response.contentType.startsWith('text/event-stream')) return await readStream(response.body, r.onDelta)
    return parseTranscription(await boundedText(response.body))
  } catch (error) {
    if (error instanceof TranscriptionError) throw error
    if (error instanceof TranscriptionFormatError) throw new TranscriptionError(VendorErrorCode.ProtocolError, error.message)
    if (deadline.timedOut) throw new TranscriptionError(VendorErrorCode.Timeout, `no answer within ${r.timeoutMs} ms`)
    if (r.signal.aborted) throw error
    throw new TranscriptionError(VendorErrorCode.ServerError, `request failed: ${(error as Error).cause ?? (error as Error).message}`)
  } finally {
    deadline.done()
  }
}

function statusCode(status: number): VendorErrorCodeValue {
  if (status === 401 || status === 403) return VendorErrorCode.AuthFailed
  if (status === 413) return VendorErrorCode.TooLarge
  if (status >= 500) return VendorErrorCode.ServerError
  return VendorErrorCode.Rejected
}

async function boundedText(body: AsyncIterable<Buffer>): Promise<string> {
  let text = ''
  const decoder = new TextDecoder()
  for await (const chunk of body) {
    text += decoder.decode(chunk, { stream: true })
    if (text.length > MAX_BODY_CHARS) throw new TranscriptionFormatError(`the answer is longer than ${MAX_BODY_CHARS} characters`)
  }
  return text + decoder.decode()
}

/** Reads `transcript.text.delta` events into the text so far, until `transcript.text.done` (or the end). */
async function readStream(body: AsyncIterable<Buffer>, onDelta: ((text: string) => void) | undefined): Promise<Transcription> {
  const sse = new SseDecoder({ maxEventChars: MAX_BODY_CHARS })
  const decoder = new TextDecoder()
  let text = ''
  let done: string | undefined
  const take = (events: string[], overflow: boolean) => {
    if (overflow) throw new TranscriptionFormatError('a streamed transcription event is too large')
    for (const data of events) {
      if (data === '[DONE]') continue
      const event = parseTranscriptionEvent(data)
      if (event.type === 'delta') {
        text += event.delta
        onDelta?.(text.trim())
      } else if (event.type === 'done') done = event.text
    }
  }
  for await (const chunk of body) {
    const { events, overflow } = sse.push(decoder.decode(chunk, { stream: true }))
    take(events, overflow)
  }
  const end = sse.end()
  take(end.events, end.overflow)
  return { text: done ?? text.trim() }
}
