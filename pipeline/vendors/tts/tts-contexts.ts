import type { PipelineLogger } from '../../runtime/logger.js'

/** Recently cancelled context ids remembered, so text and audio arriving late for them are dropped. */
const CANCELLED_LIMIT = 256

/** What every TTS context has: it takes text while open; once flushed, its end is on the way. */
export interface TtsContextState {
  phase: 'open' | 'flushed'
}

/**
 * The context bookkeeping every `TtsStream` shares: the live contexts by id, each with the stream's own state,
 * and a bounded memory of cancelled ids. It is the Map of live contexts itself, so the lookups a stream does for
 * every audio message stay plain Map calls.
 */
export class TtsContexts<S extends TtsContextState> extends Map<string, S> {
  readonly #cancelled = new Set<string>()
  readonly #label: string
  readonly #logger: PipelineLogger

  /** `label` names the stream in logs (`tts.vendor_a`). */
  constructor(label: string, logger: PipelineLogger) {
    super()
    this.#label = label
    this.#logger = logger
  }

  /** True when `contextId` was cancelled (among the last 256 cancelled). */
  isCancelled(contextId: string): boolean {
    return this.#cancelled.has(contextId)
  }

  /**
   * The context `text` goes to, created with `create` on first use (`opened` then runs with it stored), or
   * undefined when the text is to be ignored: empty, for a cancelled context, or after flush (logged).
   */
  forText(contextId: string, text: string, create: () => S, opened?: (context: S) => void): S | undefined {
    if (text.length === 0 || this.#cancelled.has(contextId)) return undefined
    let context = this.get(contextId)
    if (context === undefined) {
      context = create()
      this.set(contextId, context)
      opened?.(context)
    } else if (context.phase !== 'open') {
      this.warn(contextId, 'text after flush ignored')
      return undefined
    }
    return context
  }

  /** Marks an open context flushed and returns it; undefined when no open context has that id. */
  flush(contextId: string): S | undefined {
    const context = this.get(contextId)
    if (context === undefined || context.phase !== 'open') return undefined
    context.phase = 'flushed'
    return context
  }

  /** Forgets the context and remembers its id as cancelled; false (and nothing changes) when it already was. */
  cancel(contextId: string): boolean {
    if (this.#cancelled.has(contextId)) return false
    this.#cancelled.add(contextId)
    if (this.#cancelled.size > CANCELLED_LIMIT) {
      const oldest = this.#cancelled.values().next().value
      if (oldest !== undefined) this.#cancelled.delete(oldest)
    }
    this.delete(contextId)
    return true
  }

  /** Logs a warning about one context, naming the stream. */
  protected warn(contextId: string, message: string): void {
    this.#logger.warn({ stream: this.#label, contextId }, message)
  }
}
