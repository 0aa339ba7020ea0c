import { createParser, type EventSourceParser } from 'eventsource-parser'

/** What one chunk completed: event data in order, and whether an event grew past the limit after them. */
export interface SseChunkResult {
  events: string[]
  /** An event (or an unterminated line) exceeded the limit; nothing after it is decoded. */
  overflow: boolean
}

/**
 * Server-Sent Events framing with the WHATWG rules (lines end in \r\n, \r or \n, possibly split across chunks;
 * multi-line `data:` joined with \n; `:` comments and unknown fields ignored; a blank line dispatches). Yields only
 * the `data` of each event: event names and ids play no part in the protocols voxgate reads.
 */
export class SseDecoder {
  readonly #parser: EventSourceParser
  readonly #maxEventChars: number
  #pending: string[] = []
  #tooLarge = false
  #endsWithCr = false

  constructor(options: { maxEventChars: number }) {
    this.#maxEventChars = options.maxEventChars
    this.#parser = createParser({
      maxBufferSize: options.maxEventChars,
      onEvent: (event) => {
        if (this.#tooLarge) return
        if (event.data.length > this.#maxEventChars) this.#tooLarge = true
        else this.#pending.push(event.data)
      },
      onError: (error) => {
        // Unknown fields and bad `retry` values are ignored, as the WHATWG rules say.
        if (error.type === 'max-buffer-size-exceeded') this.#tooLarge = true
      },
    })
  }

  /** The event size limit in characters. */
  get maxEventChars(): number {
    return this.#maxEventChars
  }

  /** Feeds a decoded text chunk; returns the data of every event it completed. Nothing is decoded after overflow. */
  push(text: string): SseChunkResult {
    if (!this.#tooLarge && text !== '') {
      this.#parser.feed(text)
      this.#endsWithCr = text.endsWith('\r')
    }
    const events = this.#pending
    this.#pending = []
    return { events, overflow: this.#tooLarge }
  }

  /**
   * The stream ended. A final \r is a complete line end only now (until then it could have been the first half
   * of \r\n); an event without its blank line is dropped, as the WHATWG rules say.
   */
  end(): SseChunkResult {
    return this.push(this.#endsWithCr ? '\n' : '')
  }
}

/** Decodes a stream of text chunks: one result per chunk as it arrives, then the end-of-stream result. */
export async function* sseBatches(chunks: AsyncIterable<string>, decoder: SseDecoder): AsyncGenerator<SseChunkResult> {
  for await (const chunk of chunks) yield decoder.push(chunk)
  yield decoder.end()
}
