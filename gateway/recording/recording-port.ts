/**
 * What a session's recorder is: what the session tells it (caller and agent audio on one timeline, masks, pauses,
 * the end) and where its chunks go. `ChunkRecorder` (recorder.ts) is the one the gateway runs.
 */
import type { RecordingChunk } from '../store/recording-chunks.js'

/** Audio a recorder is given: PCM16 samples, or G.711 mu-law bytes for a recorder made with `mulaw`. */
export type RecordedAudio = Int16Array | Uint8Array

/** What the session tells a recorder; times are ms since the session connected. */
export interface Recorder {
  /**
   * Caller audio that ended at `atMs` (the session works out when from arrival or carrier timestamps). The samples
   * are copied before this returns: the caller may reuse their buffer.
   */
  caller(samples: RecordedAudio, atMs: number): void
  /** Agent audio the caller heard from `atMs` on (copied before this returns, as `caller`). */
  agent(samples: RecordedAudio, atMs: number): void
  /** A barge-in cleared playback at `atMs`: the agent channel is silent from there on (until new agent audio). */
  clearAgentAfter(atMs: number): void
  /** Silences the caller channel over [fromMs, toMs) (keypad digits, redacted words). */
  maskCaller(fromMs: number, toMs: number): void
  /** Both channels are silent from `atMs` until `resume` (`response.recording` pause). */
  pause(atMs: number): void
  resume(atMs: number): void
  /** Ends the recording at `durationMs`: waits for the queued writes, then completes (or fails) it in the store. */
  finish(durationMs: number | undefined): Promise<RecordingOutcome>
}

/** How a recording ended. */
export type RecordingOutcome = { status: 'completed'; durationMs: number } | { status: 'failed'; error: string }

/** Where a recorder's chunks go while it records (the database; a finished file may move to an object store). */
export interface RecordingSink {
  start(): Promise<void>
  /** Each chunk's `pcm` is reused once the returned promise settles: a sink that keeps the bytes copies them. */
  append(chunks: readonly RecordingChunk[]): Promise<void>
  complete(totalSamples: number): Promise<void>
  fail(error: string): Promise<void>
}
