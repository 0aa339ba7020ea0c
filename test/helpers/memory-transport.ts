import type { EndReason } from '../../core/end-reason.js'
import type { SessionTransport } from '../../gateway/sessions/ports/session-port.js'
import type { InputAudioFormat, OutputAudioFormat, PipelineEvent } from '../../pipeline/index.js'

/**
 * A transport with no wire for tests: drives a CallSession from code and records what the session asked of it. It
 * passes for a browser without a microphone (text only, nothing to play), so the session treats it as it would
 * treat that caller: no product code knows it is under test.
 */
export class MemoryTransport implements SessionTransport {
  readonly kind = 'browser' as const
  /** Reasons the session closed this transport with (at most one entry). */
  readonly closes: EndReason[] = []
  /** Every pipeline event delivered, in order. */
  readonly events: PipelineEvent[] = []
  readonly #listeners: ((e: PipelineEvent) => void)[] = []

  constructor(readonly audio?: { input: InputAudioFormat; output: OutputAudioFormat }) {}

  deliver(event: PipelineEvent): void {
    this.events.push(event)
    for (const l of this.#listeners) l(event)
  }

  /** Resolves with the first delivered event (past or future) that matches. */
  waitFor<T extends PipelineEvent>(pred: (e: PipelineEvent) => e is T, timeoutMs?: number): Promise<T>
  waitFor(pred: (e: PipelineEvent) => boolean, timeoutMs?: number): Promise<PipelineEvent>
  waitFor(pred: (e: PipelineEvent) => boolean, timeoutMs = 10_000): Promise<PipelineEvent> {
    const found = this.events.find(pred)
    if (found) return Promise.resolve(found)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('timed out waiting for a pipeline event')), timeoutMs)
      const l = (e: PipelineEvent) => {
        if (!pred(e)) return
        clearTimeout(timer)
        this.#listeners.splice(this.#listeners.indexOf(l), 1)
        resolve(e)
      }
      this.#listeners.push(l)
    })
  }

  close(reason: EndReason): void {
    this.closes.push(reason)
  }
}
