/** Runs `tick` now and then every `ms` until stopped; a tick never overlaps the one before. */
export function every(ms: number, tick: (signal: AbortSignal) => Promise<void>): () => void {
  const abort = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  const run = async (): Promise<void> => {
    try {
      await tick(abort.signal)
    } catch (e) {
      if (!abort.signal.aborted) console.warn('console refresh failed', e)
    }
    if (!abort.signal.aborted) timer = setTimeout(() => void run(), ms)
  }
  void run()
  return () => {
    abort.abort()
    clearTimeout(timer)
  }
}
