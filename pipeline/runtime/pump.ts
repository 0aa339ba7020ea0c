import type { PipelineLogger } from './logger.js'

/**
 * Feeds every event of an async stream to `handle` until the stream ends or `stop()` says so. A failing
 * stream is logged, never thrown: one broken vendor must not take the session down.
 */
export async function pump<E>(
  source: AsyncIterable<E>,
  handle: (e: E) => void,
  stop: () => boolean,
  log: PipelineLogger,
  what: string,
): Promise<void> {
  try {
    for await (const e of source) {
      if (stop()) break
      handle(e)
    }
  } catch (err) {
    log.error({ err }, `${what} stream failed`)
  }
}
