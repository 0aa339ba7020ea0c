import type { TurnLatency } from './pipeline-io.js'
import { Playback, heardText } from './playback.js'

/** Timestamps of one reply, for the turn's latency and the gateway's own share of it. */
export interface TurnTimings {
  /** End of the user's speech (or the moment typed text arrived). */
  userEndAt?: number
  /** The agent request left the gateway. */
  sentAt?: number
  /** The first reply byte arrived. */
  firstByteAt?: number
  /** The first reply text reached TTS. */
  firstTextAt?: number
  /** The first audio chunk went to the transport. */
  firstAudioAt?: number
}

/** One assistant turn: the request it answers, what was said, and what the caller heard. */
export class AssistantTurn {
  readonly abort = new AbortController()
  readonly timings: TurnTimings = {}
  readonly playback: Playback
  text = ''
  agentDone = false
  ttsDone: boolean
  hangup = false
  interrupted = false
  finished = false
  safetyTimer: NodeJS.Timeout | undefined

  constructor(
    readonly turnId: string,
    /** `data`: speech the agent gave in reply to client data. */
    readonly kind: 'welcome' | 'message' | 'data',
    /** The user's words this turn answers (null for the welcome turn). */
    readonly userText: string | null,
    hasSpeech: boolean,
    preciseReports: boolean,
  ) {
    this.playback = new Playback(preciseReports)
    this.ttsDone = !hasSpeech
  }

  /** The assistant text for the transcript: all of it, or only what the caller heard when interrupted. */
  transcriptText(now: number, hasSpeech: boolean): string {
    if (!this.interrupted || !hasSpeech) return this.text.trim()
    return heardText(this.text.trim(), this.playback.heardMs(now), this.ttsDone ? this.playback.totalMs : undefined)
  }

  /** The turn's latency split. */
  latency(): TurnLatency {
    const t = this.timings
    const out = t.firstAudioAt ?? t.firstTextAt
    const totalMs = t.userEndAt !== undefined && out !== undefined ? out - t.userEndAt : null
    const agentMs = t.sentAt !== undefined && t.firstByteAt !== undefined ? t.firstByteAt - t.sentAt : null
    const ttsMs = t.firstTextAt !== undefined && t.firstAudioAt !== undefined ? t.firstAudioAt - t.firstTextAt : null
    const gatewayMs = totalMs === null ? null : Math.max(0, totalMs - (agentMs ?? 0) - (ttsMs ?? 0))
    return { totalMs, agentMs, ttsMs, gatewayMs }
  }
}
