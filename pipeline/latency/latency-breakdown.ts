/**
 * Where one turn's latency went: the moments the pipeline knows, from the end of the user's speech to the first
 * audio the caller heard, as one ordered list. This is the JSON shape the gateway stores with the turn, returns
 * in session details (`latency_breakdown`) and sends on the next `message` webhook, so it is written in the
 * wire's snake_case.
 */

/** The stages of a turn, in the order they happen. */
export const LATENCY_STAGES = [
  /** The user stopped speaking (VAD end, push-to-talk release, or typed text arriving): the origin, at 0. */
  'user_speech_end',
  /** The user turn was committed with its final transcript. */
  'transcript_final',
  /** The agent request left the gateway. */
  'webhook_sent',
  /** The first byte of the agent's reply arrived. */
  'reply_first_byte',
  /** The first reply text arrived. */
  'reply_first_text',
  /** That text was handed to the TTS stream (which sends it to the vendor at once). */
  'tts_request',
  /** The first audio of the reply came back from TTS. */
  'tts_first_audio',
  /** The transport wrote the first audio frame to the caller's socket. */
  'first_frame_out',
  /** Phone calls: the carrier echoed the first audio chunk's mark (the caller heard it). */
  'first_audio_heard',
] as const

export type LatencyStageName = (typeof LATENCY_STAGES)[number]

/** One stage: when it was reached (ms after the end of user speech) and how long it took after the one before. */
export interface LatencyStage {
  name: LatencyStageName
  at_ms: number
  duration_ms: number
}

/**
 * A turn's stages that were reached, in order. `at_ms` never decreases, and the `duration_ms` add up to the last
 * stage's `at_ms`, which is the turn's `latency_ms`.
 */
export interface LatencyBreakdown {
  stages: LatencyStage[]
}

/** The moments of one turn on the pipeline's clock (ms); absent when not reached. */
export type StageTimes = Partial<Record<LatencyStageName, number>>

/** Stages that mean the user got something back; a breakdown ends at one of them or there is none. */
const OUTPUT_STAGES: ReadonlySet<LatencyStageName> = new Set([
  'reply_first_text',
  'tts_request',
  'tts_first_audio',
  'first_frame_out',
  'first_audio_heard',
])

/**
 * The breakdown of a turn, or null when it has no origin (a welcome turn) or never produced anything for the user
 * (cut off before the first reply text). Times are rounded to whole ms first, so the durations add up exactly.
 */
export function latencyBreakdown(times: StageTimes): LatencyBreakdown | null {
  const origin = times.user_speech_end
  if (origin === undefined) return null
  const stages: LatencyStage[] = []
  let previous = 0
  for (const name of LATENCY_STAGES) {
    const at = times[name]
    if (at === undefined) continue
    // The clock is monotonic and each stage is stamped by the event that causes the next, so this never decreases.
    const atMs = Math.round(at - origin)
    stages.push({ name, at_ms: atMs, duration_ms: atMs - previous })
    previous = atMs
  }
  const last = stages.at(-1)
  if (last === undefined || !OUTPUT_STAGES.has(last.name)) return null
  return { stages }
}

/** The turn's latency: the last stage's offset (end of user speech -> the furthest output stage reached). */
export function breakdownTotalMs(b: LatencyBreakdown): number {
  return b.stages.at(-1)?.at_ms ?? 0
}

/** A finished turn's latency, as the next `message` request offers it to the backend. */
export interface PreviousTurnLatency {
  turnId: string
  latencyMs: number
  breakdown: LatencyBreakdown
}
