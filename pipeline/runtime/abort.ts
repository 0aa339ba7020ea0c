/** An error whose `name` is `AbortError`, as DOM APIs throw when a signal aborts. */
export function abortError(message = 'The operation was aborted'): Error {
  const error = new Error(message)
  error.name = 'AbortError'
  return error
}

/** Resolve after `ms`, or reject at once when `signal` aborts. */
export function sleep(ms: number, options: { signal?: AbortSignal } = {}): Promise<void> {
  const { signal } = options
  if (signal?.aborted) return Promise.reject(signal.reason ?? abortError())
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason ?? abortError())
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
