/**
 * Both legs of a bridged warm transfer transcribed for the record, when the
 * backend asked for it (`transcribe: true`): a speech-to-text stream per leg, opened with the agent's configuration,
 * fed what each party says as the bridge relays it. Each final segment is handed on with its speaker; the agent
 * still says nothing. At the end of the bridge each stream is asked to finish its utterance and closed.
 */
import type { Log } from '../../core/log.js'
import type { AudioFormat, SttStream } from '../../pipeline/index.js'

export type BridgeSpeaker = 'caller' | 'human'

/** What the transcriber needs. */
export interface BridgeTranscriberDeps {
  /** A speech-to-text stream for audio in `format`; undefined when the agent has none (nothing is transcribed). */
  openStt(format: AudioFormat, signal: AbortSignal): SttStream | undefined
  /** A final of one leg (the transfer redacts and stores it). */
  heard(speaker: BridgeSpeaker, text: string): void
  readonly log: Log
}

/** How long the end of the bridge waits for each leg's last words after asking for them. */
export const FINAL_WAIT_MS = 3_000

/** One bridge's transcription. */
export class BridgeTranscriber {
  readonly #deps: BridgeTranscriberDeps
  readonly #abort = new AbortController()
  readonly #legs: { speaker: BridgeSpeaker; stream: SttStream; reading: Promise<void>; unlisten: () => void }[] = []

  constructor(deps: BridgeTranscriberDeps) {
    this.#deps = deps
  }

  /** Starts transcribing a leg: `listen` gives its audio in `format` and returns the unlisten. */
  add(speaker: BridgeSpeaker, format: AudioFormat, listen: (listener: (audio: Uint8Array) => void) => () => void): void {
    const stream = this.#deps.openStt(format, this.#abort.signal)
    if (stream === undefined) return
    const unlisten = listen((audio) => stream.pushAudio(Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength)))
    const reading = (async () => {
      try {
        for await (const event of stream) {
          if (event.type === 'final' && event.text.trim() !== '') this.#deps.heard(speaker, event.text.trim())
          else if (event.type === 'error') this.#deps.log.warn({ speaker, message: event.message }, 'bridged transcription error')
        }
      } catch (err) {
        if (!this.#abort.signal.aborted) this.#deps.log.warn({ err, speaker }, 'bridged transcription stopped')
      }
    })()
    this.#legs.push({ speaker, stream, reading, unlisten })
  }

  /** The bridge is over: each leg's stream finishes its utterance, then closes (bounded), one after the other. */
  async stop(): Promise<void> {
    const legs = this.#legs.splice(0)
    for (const leg of legs) {
      leg.unlisten()
      leg.stream.finalize()
      const closed = leg.stream.close()
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<void>((r) => {
        timer = setTimeout(r, FINAL_WAIT_MS)
      })
      await Promise.race([Promise.all([closed, leg.reading]), late])
      clearTimeout(timer)
    }
    this.#abort.abort()
  }
}
