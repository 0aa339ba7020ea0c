import type { OutputAudioFormat } from '../../audio/audio-format.js'
import type { TtsOpenAiCompatibleOptions } from '../../options/openai-compatible-options.js'
import { AsyncQueue } from '../../runtime/async-queue.js'
import { sleep } from '../../runtime/abort.js'
import { RequestDeadline } from '../../runtime/request-deadline.js'
import { type PipelineLogger, silentLogger } from '../../runtime/logger.js'
import { postToSpeechServer } from '../stt/openai-http-post.js'
import { openAiErrorMessage } from '../stt/openai-transcription-codec.js'
import { VendorErrorCode, type VendorErrorCodeValue } from '../socket/vendor-errors.js'
import { PcmStreamReader } from './pcm-stream-reader.js'
import { type SentenceContextState, SentenceContexts } from './sentence-contexts.js'
import type { TtsEvent, TtsStream, TtsStreamOptions } from './tts-stream.js'

const LABEL = 'tts.openai_compatible'
/** Reading the server's audio pauses while this many events wait for the consumer: bounded, nothing dropped. */
const QUEUE_HIGH_WATER = 200
/** How long close() lets flushed contexts finish speaking. */
const CLOSE_TIMEOUT_MS = 3000
/** An error body longer than this is cut. */
const MAX_ERROR_BODY = 4096

interface ContextState extends SentenceContextState {
  running: boolean
  abort: AbortController
}

/** A failed sentence: a stable code and the cause. */
class SpeechError extends Error {
  constructor(
    readonly code: VendorErrorCodeValue,
    message: string,
  ) {
    super(message)
  }
}

/**
 * `tts.openai_compatible`: an OpenAI-format speech server (`POST {base}/audio/speech` with `model`, `voice`, `input`,
 * `response_format` `pcm` or `wav`, `speed`). Each context's text is spoken sentence by sentence as boundaries
 * arrive; each sentence's answer is streamed into `audio` events as its bytes come (resampled to the channel's rate),
 * so the first audio plays before the server has finished. cancel() aborts the request in flight at once. A failed
 * sentence is an `error` event for its context (timeout, HTTP status with OpenAI's error message) and the context
 * ends with `done`, so the reply never waits on it.
 */
export class OpenAiSpeechTtsStream implements TtsStream {
  readonly #o: TtsOpenAiCompatibleOptions
  readonly #endpoint: TtsStreamOptions['endpoint']
  readonly #format: OutputAudioFormat
  readonly #logger: PipelineLogger
  readonly #contexts: SentenceContexts<ContextState>
  readonly #queue = new AsyncQueue<TtsEvent>({ capacity: 100_000 })
  readonly #lifetime = new AbortController()
  #closing = false
  #drained: (() => void) | undefined

  constructor(options: TtsOpenAiCompatibleOptions, stream: TtsStreamOptions) {
    this.#o = options
    this.#endpoint = stream.endpoint
    this.#format = stream.outputFormat
    this.#logger = stream.logger ?? silentLogger
    this.#contexts = new SentenceContexts(LABEL, this.#logger)
    stream.signal?.addEventListener('abort', () => this.#shutdown(), { once: true })
    if (stream.signal?.aborted) this.#shutdown()
  }

  get closed(): boolean {
    return this.#closing || this.#queue.ended
  }

  pushText(contextId: string, text: string): void {
    if (this.closed) return
    const context = this.#contexts.pushText(contextId, text, () => ({
      phase: 'open',
      pending: '',
      sentences: [],
      chars: 0,
      running: false,
      abort: new AbortController(),
    }))
    if (context === undefined) return
    this.#run(contextId, context)
  }

  flush(contextId: string): void {
    const context = this.#contexts.flush(contextId)
    if (context === undefined) return
    this.#run(contextId, context)
  }

  cancel(contextId: string): void {
    const context = this.#contexts.get(contextId)
    if (!this.#contexts.cancel(contextId)) return
    context?.abort.abort()
    this.#checkDrained()
  }

  /** Speaks the context's sentences one after another (one request at a time per context). */
  #run(contextId: string, context: ContextState): void {
    if (context.running) return
    context.running = true
    void this.#speakAll(contextId, context).finally(() => {
      context.running = false
      // Text or a flush that came while the loop was winding down (it ends a microtask after its last check).
      const live = this.#contexts.get(contextId) === context && !context.abort.signal.aborted
      if (live && (context.sentences.length > 0 || context.phase === 'flushed')) this.#run(contextId, context)
      else this.#checkDrained()
    })
  }

  async #speakAll(contextId: string, context: ContextState): Promise<void> {
    while (!context.abort.signal.aborted) {
      const sentence = context.sentences.shift()
      if (sentence === undefined) {
        if (context.phase !== 'flushed') return
        this.#contexts.delete(contextId)
        this.#queue.push({ type: 'done', contextId })
        return
      }
      try {
        await this.#speak(contextId, sentence, context.abort.signal)
      } catch (error) {
        if (context.abort.signal.aborted || this.#lifetime.signal.aborted) return
        const e = error instanceof SpeechError ? error : new SpeechError(VendorErrorCode.ServerError, (error as Error).message)
        this.#logger.warn({ stream: LABEL, contextId, code: e.code }, e.message)
        this.#queue.push({ type: 'error', code: e.code, message: `${LABEL}: ${e.message}`, fatal: false, contextId })
        // The rest of the reply is dropped: a reply with a sentence missing in the middle would mislead.
        context.sentences.length = 0
        context.phase = 'flushed'
      }
    }
  }

  async #speak(contextId: string, input: string, signal: AbortSignal): Promise<void> {
    const deadline = new RequestDeadline(this.#o.timeout_ms, [signal, this.#lifetime.signal])
    const all = deadline.signal
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (this.#endpoint.apiKey !== '') headers.authorization = `Bearer ${this.#endpoint.apiKey}`
    const body = {
      model: this.#o.model,
      voice: this.#o.voice,
      input,
      response_format: this.#o.response_format,
      ...(this.#o.speed !== undefined && { speed: this.#o.speed }),
    }
    try {
      const response = await postToSpeechServer(`${this.#endpoint.url}/audio/speech`, headers, Buffer.from(JSON.stringify(body)), all)
      if (response.status < 200 || response.status > 299) {
        const text = (await errorText(response.body)).slice(0, MAX_ERROR_BODY)
        const code =
          response.status === 401 || response.status === 403
            ? VendorErrorCode.AuthFailed
            : response.status >= 500
              ? VendorErrorCode.ServerError
              : VendorErrorCode.Rejected
        throw new SpeechError(code, `HTTP ${response.status}: ${openAiErrorMessage(text) ?? text.slice(0, 200)}`.trim())
      }
      const reader = new PcmStreamReader(this.#o.response_format, this.#o.sample_rate, this.#format)
      let first = true
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        if (first) {
          // The time limit is for the first byte: a long sentence may take its time once it streams.
          deadline.stopClock()
          first = false
        }
        this.#audio(contextId, reader.push(chunk))
        while (this.#queue.size > QUEUE_HIGH_WATER && !all.aborted) await sleep(10, { signal: all }).catch(() => undefined)
      }
      this.#audio(contextId, reader.end())
    } catch (error) {
      if (error instanceof SpeechError) throw error
      if (deadline.timedOut) throw new SpeechError(VendorErrorCode.Timeout, `no audio within ${this.#o.timeout_ms} ms`)
      throw error
    } finally {
      deadline.done()
    }
  }

  #audio(contextId: string, audio: Buffer): void {
    if (audio.length === 0 || this.#contexts.isCancelled(contextId)) return
    this.#queue.push({ type: 'audio', contextId, audio })
  }

  /** Graceful close: flushed contexts finish speaking, open ones are dropped, then iteration ends. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve()
    this.#closing = true
    for (const [id, context] of this.#contexts) {
      if (context.phase === 'open') this.cancel(id)
    }
    const drained = new Promise<void>((resolve) => {
      this.#drained = resolve
    })
    this.#checkDrained()
    // Bounded like the WebSocket vendors' close: a server that stalls mid-sentence does not hold the session's end.
    const timer = setTimeout(() => this.#shutdown(), CLOSE_TIMEOUT_MS)
    timer.unref()
    return drained.then(() => {
      clearTimeout(timer)
      this.#shutdown()
    })
  }

  #checkDrained(): void {
    if (!this.#closing || this.#drained === undefined) return
    for (const context of this.#contexts.values()) if (context.running || context.sentences.length > 0) return
    this.#drained()
  }

  #shutdown(): void {
    this.#closing = true
    this.#lifetime.abort()
    this.#queue.end()
    this.#drained?.()
  }

  [Symbol.asyncIterator](): AsyncIterator<TtsEvent, undefined> {
    return this.#queue[Symbol.asyncIterator]()
  }
}

/** The start of an error answer's body (at most {@link MAX_ERROR_BODY} bytes read). */
async function errorText(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    chunks.push(chunk)
    size += chunk.length
    if (size >= MAX_ERROR_BODY) break
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Create a `tts.openai_compatible` stream (nothing to connect: each sentence is a request). */
export function createOpenAiSpeechTtsStream(options: TtsOpenAiCompatibleOptions, stream: TtsStreamOptions): TtsStream {
  return new OpenAiSpeechTtsStream(options, stream)
}
