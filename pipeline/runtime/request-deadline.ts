/**
 * One request's signal: aborted when any of its parents aborts (the session, the reply) or when its time limit
 * passes, and released by `done()`, which clears the timer and unhooks the parents, so nothing of the request
 * outlives it. `AbortSignal.timeout` cannot be cleared: each request left a timer that fired its full limit later
 * (a DOMException built and an abort dispatched, seconds into some later turn), and `AbortSignal.any` builds a
 * composite signal per request; the two were a tenth of a speech-server turn's work on our side.
 */
export class RequestDeadline {
  readonly #controller = new AbortController()
  readonly #parents: readonly AbortSignal[]
  readonly #onParentAbort = (event: Event) => this.#controller.abort((event.target as AbortSignal).reason)
  #timer: NodeJS.Timeout | undefined
  #timedOut = false

  /** `ms`: the time limit; `parents`: the signals that abort the request with them. */
  constructor(ms: number, parents: readonly AbortSignal[]) {
    this.#parents = parents
    for (const parent of parents) {
      if (parent.aborted) {
        this.#controller.abort(parent.reason)
        return
      }
      parent.addEventListener('abort', this.#onParentAbort, { once: true })
    }
    this.#timer = setTimeout(() => {
      this.#timedOut = true
      this.#controller.abort(timeoutError(ms))
    }, ms)
  }

  get signal(): AbortSignal {
    return this.#controller.signal
  }

  /** The time limit ended the request (not a parent). */
  get timedOut(): boolean {
    return this.#timedOut
  }

  /** The time limit no longer applies (the answer started); the parents still abort the request. */
  stopClock(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /** The request is over: its timer and its hooks on the parents are released. Idempotent. */
  done(): void {
    this.stopClock()
    for (const parent of this.#parents) parent.removeEventListener('abort', this.#onParentAbort)
  }
}

function timeoutError(ms: number): Error {
  const error = new Error(`no answer within ${ms} ms`)
  error.name = 'TimeoutError'
  return error
}
