import type { WarmTransferCommand } from '../agent/backend-event.js'
import { breakdownTotalMs, type LatencyBreakdown, latencyBreakdown } from '../latency/latency-breakdown.js'
import type { TurnFailure, TurnFailureCause } from '../agent/turn-failure.js'
import type { TurnEndReason } from '../turn-rules/turn-end-judge.js'
import type { CompletedTurn, TurnLatency } from './pipeline-io.js'
import { Playback, heardText } from './playback.js'

/** Timestamps of one reply, for the turn's latency and the gateway's own share of it. */
export interface TurnTimings {
  /** End of the user's speech (or the moment typed text arrived). */
  userEndAt?: number
  /** The user turn was committed with its final transcript. */
  transcriptAt?: number
  /** The agent request left the gateway. */
  sentAt?: number
  /** The first reply byte arrived. */
  firstByteAt?: number
  /** The first reply text reached TTS. */
  firstTextAt?: number
  /** The first reply text was handed to the TTS stream. */
  ttsRequestAt?: number
  /** The first audio chunk came from TTS and went to the transport. */
  firstAudioAt?: number
  /** The transport wrote the first audio of the turn to its socket. */
  firstFrameOutAt?: number
  /** The carrier echoed the mark of the turn's first audio chunk (phone calls). */
  firstHeardAt?: number
}

/**
 * When the user's words this turn answers ended, when they were committed, and why then (all absent for a
 * welcome).
 */
export type UserEnd = Pick<TurnTimings, 'userEndAt' | 'transcriptAt'> & { reason?: TurnEndReason | undefined }

/** One assistant turn: the request it answers, what was said, and what the caller heard. */
export class AssistantTurn {
  readonly abort = new AbortController()
  readonly timings: TurnTimings = {}
  readonly playback: Playback
  text = ''
  agentDone = false
  ttsDone: boolean
  hangup = false
  /** The reply ends by handing the caller elsewhere (`response.transfer`), once its words were heard. */
  transfer:
    | { to: string; callerId?: string | undefined; headers?: Record<string, string> | undefined; warm?: WarmTransferCommand | undefined }
    | undefined
  /** Keypad tones to play once the reply's speech is out (`response.dtmf`), in order. */
  readonly dtmf: { digits: string; toneMs?: number | undefined; gapMs?: number | undefined }[] = []
  /** Digits whose tones were sent, for the transcript. */
  tonesSent = ''
  interrupted = false
  finished = false
  safetyTimer: NodeJS.Timeout | undefined
  /** The agent itself said something speakable (a holding phrase or fallback does not count). */
  agentSpoke = false
  /** Why the turn failed, once known; `heard` is the fallback said instead. */
  failure: { cause: TurnFailureCause; detail: string | null; heard: string | null } | undefined
  /** When the turn opened (pipeline clock): a failed welcome's wait is counted from here. */
  openedAt = 0
  /** Playout is paused for caller speech since then (pipeline clock); undefined while it plays. */
  pausedAt: number | undefined
  /** Why the user turn this one answers ended when it did; undefined for a turn no user turn started. */
  userEndReason: TurnEndReason | undefined

  constructor(
    readonly turnId: string,
    /** `data`: speech the agent gave in reply to client data. */
    readonly kind: 'welcome' | 'message' | 'data' | 'machine_detection' | 'transfer_failed',
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
    const tones = this.tonesSent === '' ? '' : `[DTMF ${this.tonesSent}]`
    const said =
      !this.interrupted || !hasSpeech
        ? this.text.trim()
        : heardText(this.text.trim(), this.playback.heardMs(now), this.ttsDone ? this.playback.totalMs : undefined)
    return [said, tones].filter((t) => t !== '').join(' ')
  }

  /**
   * The failure as stored, or null: the wait runs from the end of the caller's turn (the opening, for a welcome) to
   * the first audio the caller heard (the first text, without speech), or to `now` when there was none.
   */
  failureRecord(now: number, hasSpeech: boolean): TurnFailure | null {
    if (this.failure === undefined) return null
    const t = this.timings
    const origin = t.userEndAt ?? this.openedAt
    const heardAt = t.firstHeardAt ?? t.firstFrameOutAt ?? t.firstAudioAt ?? (hasSpeech ? now : (t.firstTextAt ?? now))
    return { ...this.failure, waitedMs: Math.max(0, Math.round(heardAt - origin)) }
  }

  /** The turn's stages, from the end of user speech to the furthest output reached; null without both ends. */
  breakdown(): LatencyBreakdown | null {
    const t = this.timings
    return latencyBreakdown({
      user_speech_end: t.userEndAt,
      transcript_final: t.transcriptAt,
      webhook_sent: t.sentAt,
      reply_first_byte: t.firstByteAt,
      reply_first_text: t.firstTextAt,
      tts_request: t.ttsRequestAt,
      tts_first_audio: t.firstAudioAt,
      first_frame_out: t.firstFrameOutAt,
      first_audio_heard: t.firstHeardAt,
    })
  }

  /**
   * The turn's latency split. The total runs from the end of user speech to the furthest output stage reached
   * (first audio heard on a phone, the first frame written otherwise, first text without speech): the breakdown's.
   */
  latency(breakdown: LatencyBreakdown | null = this.breakdown()): TurnLatency {
    const t = this.timings
    const totalMs = breakdown === null ? null : breakdownTotalMs(breakdown)
    const agentMs = t.sentAt !== undefined && t.firstByteAt !== undefined ? t.firstByteAt - t.sentAt : null
    const ttsMs = t.firstTextAt !== undefined && t.firstAudioAt !== undefined ? t.firstAudioAt - t.firstTextAt : null
    const gatewayMs = totalMs === null ? null : Math.max(0, totalMs - (agentMs ?? 0) - (ttsMs ?? 0))
    return { totalMs, agentMs, ttsMs, gatewayMs }
  }

  /**
   * The finished turn as the transcript stores it, `said` being what the caller heard; null when nobody said
   * anything (a silent welcome, a reply cut off before any audio) and it did not fail. `now` is the pipeline's
   * monotonic clock: the latency's wall-clock origin is placed back from the present by it.
   */
  completed(said: string, now: number, hasSpeech: boolean): CompletedTurn | null {
    const breakdown = this.breakdown()
    const failure = this.failureRecord(now, hasSpeech)
    if (this.userText === null && said === '' && failure === null) return null
    const userEndAt = this.timings.userEndAt
    return {
      turnId: this.turnId,
      timestamp: new Date(),
      userMessage: this.userText,
      assistantMessage: said === '' ? null : said,
      latencyMs: breakdown === null ? null : breakdownTotalMs(breakdown),
      latency: this.latency(breakdown),
      latencyBreakdown: breakdown,
      latencyOrigin: breakdown === null || userEndAt === undefined ? null : new Date(Date.now() - (now - userEndAt)),
      interrupted: this.interrupted,
      failure,
      turnEnd: this.userEndReason ?? null,
    }
  }
}
