/**
 * One side of the warm transfer's bridge: a carrier call's media stream, a browser socket, later a SIP call. The
 * bridge needs only this of it, so each transport adapts its own socket and nothing here knows one.
 */
import type { AudioFormat } from '../../pipeline/index.js'

/** What the bridge needs of a leg. */
export interface BridgeLeg {
  /** What this leg hears from its party (a browser sends PCM16 at 8 kHz, a phone mu-law). */
  readonly inputFormat: AudioFormat
  /** What this leg plays to its party (a browser takes PCM16 at 16 kHz, a phone mu-law). */
  readonly outputFormat: AudioFormat
  /** Delivers the party's audio to `listener` as it arrives, until the returned function is called. */
  listen(listener: (audio: Uint8Array) => void): () => void
  /** Plays one 20 ms frame in `outputFormat` to the party, now (the leg's transport paces and bounds its queue). */
  send(frame: Uint8Array): void
}

/**
 * A leg whose audio arrives as an async source (a queue a transport fills): each piece is handed on as soon as the
 * source yields it. Listening again after stopping starts a new pass over the same source.
 */
export function legFromAsyncSource(options: {
  inputFormat: AudioFormat
  outputFormat: AudioFormat
  source: AsyncIterable<Uint8Array>
  send: (frame: Uint8Array) => void
  /** Called with an error the source threw (the leg then delivers nothing more), or its ending failed. */
  onError: (error: unknown) => void
}): BridgeLeg {
  return {
    inputFormat: options.inputFormat,
    outputFormat: options.outputFormat,
    send: options.send,
    listen(listener) {
      let stopped = false
      const iterator = options.source[Symbol.asyncIterator]()
      const pump = async (): Promise<void> => {
        for (;;) {
          const next = await iterator.next()
          if (stopped || next.done === true) return
          listener(next.value)
        }
      }
      pump().catch((error: unknown) => {
        if (!stopped) options.onError(error)
      })
      return () => {
        if (stopped) return
        stopped = true
        // Ends a generator at its next await.
        iterator.return?.()?.catch(options.onError)
      }
    },
  }
}
