// A caller's words as the two STT vendor fakes would report them, timed from a script instead of recognised: each
// word comes as an interim `interimDelayMs` after it was said, and a pause of at least the vendor's endpointing
// silence ends the segment with the vendor's end of turn `finalDelayMs` later: Deepgram-like (vendor_a, nova-3)
// `Results` with `is_final` + `speech_final` after `endpointing` ms of silence, AssemblyAI-like (vendor_b)
// `Turn` end-of-turn messages after `min_end_of_turn_silence_when_confident` ms. A `Finalize` / `ForceEndpoint`
// is answered (by the vendor fakes themselves) with the words heard and not yet finalized. The messages are the
// vendor fakes' own, so they are shaped as those fakes document.
import type { FakeAssemblyAiConnection } from '../assemblyai/fake-assemblyai.js'
import type { FakeDeepgramConnection } from '../deepgram/fake-deepgram.js'

/** A word of the script: ms from the moment the script's audio started playing. */
export interface ScriptedWord {
  word: string
  startMs: number
  endMs: number
}

/** How far behind the audio the vendor reports words, and how much silence ends its segment. */
export interface SttTiming {
  interimDelayMs: number
  finalDelayMs: number
  /** Silence after a word that ends the vendor's segment (its endpointing). */
  endpointingMs: number
}

/** Either vendor fake's connection, with what this driver needs of it. */
export type ScriptedConnection =
  | { vendor: 'vendor_a'; connection: FakeDeepgramConnection }
  | { vendor: 'vendor_b'; connection: FakeAssemblyAiConnection }

/**
 * Plays `words` (timed from `startedAt`, `performance.now()` ms) through `target` as that vendor would report
 * them. Returns a stop function that cancels what is not sent yet.
 */
export function playScriptedWords(
  target: ScriptedConnection,
  words: readonly ScriptedWord[],
  startedAt: number,
  timing: SttTiming,
): () => void {
  const timers: NodeJS.Timeout[] = []
  /** Index of the first word not yet finalized (by a segment end or a Finalize). */
  let firstOpen = 0
  /** Words heard so far (their interim was sent). */
  let heard = 0
  const at = (ms: number, run: () => void): void => {
    timers.push(setTimeout(run, Math.max(0, startedAt + ms - performance.now())))
  }
  const text = (from: number, to: number): string =>
    words
      .slice(from, to)
      .map((w) => w.word)
      .join(' ')
  const seconds = (from: number, to: number) =>
    words.slice(from, to).map((w) => ({ word: w.word, start: w.startMs / 1000, end: w.endMs / 1000 }))
  const pendingChanged = (): void => {
    target.connection.pendingTranscript = text(firstOpen, heard)
  }
  // The vendor fake answers Finalize / ForceEndpoint with `pendingTranscript` (its own listener runs first): the
  // words it gave are final from then on.
  target.connection.socket.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) return
    const message = data.toString('utf8')
    if (message.includes('Finalize') || message.includes('ForceEndpoint')) {
      firstOpen = Math.max(firstOpen, heard)
      target.connection.pendingTranscript = ''
    }
  })

  words.forEach((w, i) => {
    at(w.endMs + timing.interimDelayMs, () => {
      heard = Math.max(heard, i + 1)
      if (i < firstOpen) return
      if (target.vendor === 'vendor_a') target.connection.sendResults(text(firstOpen, i + 1), { isFinal: false }, seconds(firstOpen, i + 1))
      else target.connection.sendPartial('', text(firstOpen, i + 1).split(' '))
      pendingChanged()
    })
    const next = words[i + 1]
    const silence = next === undefined ? Number.POSITIVE_INFINITY : next.startMs - w.endMs
    if (silence < timing.endpointingMs) return
    at(w.endMs + timing.endpointingMs + timing.finalDelayMs, () => {
      if (i < firstOpen) return
      const segment = text(firstOpen, i + 1)
      const timed = seconds(firstOpen, i + 1)
      firstOpen = i + 1
      pendingChanged()
      if (target.vendor === 'vendor_a') target.connection.sendResults(segment, { isFinal: true, speechFinal: true }, timed)
      else target.connection.sendEndOfTurn(segment)
    })
  })
  return () => {
    for (const t of timers) clearTimeout(t)
  }
}
