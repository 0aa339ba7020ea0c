import { splitSentences } from './espeak-sentences.js'
import { type TtsContextState, TtsContexts } from './tts-contexts.js'

/** Text buffered per context; more is dropped with a warning (a reply is never this long). */
const MAX_CONTEXT_CHARS = 100_000

/** A context whose text is spoken sentence by sentence. */
export interface SentenceContextState extends TtsContextState {
  /** Text not yet split into sentences. */
  pending: string
  /** Sentences waiting to be spoken, in order. */
  sentences: string[]
  /** Text taken so far, against {@link MAX_CONTEXT_CHARS}. */
  chars: number
}

/**
 * The context table of a TTS that speaks each sentence as soon as its boundary arrives (`tts.local`,
 * `tts.openai_compatible`): text is split into queued sentences as it comes, and flush turns the rest into the last.
 */
export class SentenceContexts<S extends SentenceContextState> extends TtsContexts<S> {
  /**
   * Queues the sentences `text` completes in its context (created with `create` on first use) and returns the
   * context; undefined when the text is ignored (see {@link TtsContexts.forText}) or over the limit (logged).
   */
  pushText(contextId: string, text: string, create: () => S): S | undefined {
    const context = this.forText(contextId, text, create)
    if (context === undefined) return undefined
    if (context.chars + text.length > MAX_CONTEXT_CHARS) {
      this.warn(contextId, 'context text limit reached, text dropped')
      return undefined
    }
    context.chars += text.length
    const { sentences, rest } = splitSentences(context.pending + text)
    context.pending = rest
    context.sentences.push(...sentences)
    return context
  }

  /** Marks an open context flushed, its text not yet ended queued as the last sentences; undefined as in `TtsContexts`. */
  override flush(contextId: string): S | undefined {
    const context = super.flush(contextId)
    if (context === undefined) return undefined
    context.sentences.push(...splitSentences(context.pending, true).sentences)
    context.pending = ''
    return context
  }
}
