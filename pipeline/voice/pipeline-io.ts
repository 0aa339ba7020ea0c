import type { WarmTransferCommand } from '../agent/backend-event.js'
import type { TurnFailure } from '../agent/turn-failure.js'
import type { LatencyBreakdown } from '../latency/latency-breakdown.js'
import type { TurnEndReason } from '../turn-rules/turn-end-judge.js'

/**
 * The contract between a voice pipeline and the transport that carries one call (browser WebSocket or carrier
 * media stream). Transports translate wire messages into `PipelineInput` calls and `PipelineEvent`s back into
 * wire messages; they hold no turn-taking logic of their own. The session behind the transport hears from the
 * pipeline through `PipelineHooks`. Code outside pipeline/ imports all this from `pipeline/index.ts`.
 */

/** Everything the pipeline tells the transport. */
export type PipelineEvent =
  /** A user turn was detected, or the assistant's turn begins. A user turn during playback is a barge-in. */
  | { type: 'turn.start'; role: 'user' | 'assistant'; turnId: string }
  /** A turn is over (browser extension message). */
  | { type: 'turn.end'; role: 'user' | 'assistant'; turnId: string }
  /**
   * Assistant speech in the transport's output format. `chunkId` is unique per session and increasing; the
   * transport reports it back through `markPlayed` once the caller has heard it (carrier marks).
   */
  | {
      type: 'audio'
      turnId: string
      chunkId: number
      audio: Buffer
      durationMs: number
      /**
       * Set when the chunk is `response.dtmf` keypad tones (`audio` holds them in-band): a transport that can send
       * the digits out of band (SIP, RFC 4733) may send them instead of `audio`, in the same time. Tone and gap
       * lengths are already clamped to the pipeline's bounds; `w` is a 500 ms pause.
       */
      dtmf?: { readonly digits: string; readonly toneMs: number; readonly gapMs: number } | undefined
    }
  /** Drop every queued, unplayed assistant audio now (barge-in): `clear` for the carrier. */
  | { type: 'clear_playback'; turnId: string }
  /**
   * Caller speech over the reply may be an interruption: stop playing now but keep the position and what is queued
   * (audio that arrives meanwhile queues too). A `resume_playback` (play on from there) or a `clear_playback`
   * (drop it all) for the same turn always follows. A transport that cannot pause what it already sent holds back
   * what it has not.
   */
  | { type: 'pause_playback'; turnId: string }
  /** The paused reply plays on from where it paused (the caller's speech was a backchannel or noise). */
  | { type: 'resume_playback'; turnId: string }
  | { type: 'assistant.text.delta'; turnId: string; content: string }
  | { type: 'assistant.text'; turnId: string; content: string }
  /** User transcript with the SPEC's delta_counter rules (interim replaces same counter; delta stabilises). */
  | { type: 'user.transcript.interim_delta'; turnId: string; content: string; deltaCounter: number }
  | { type: 'user.transcript.delta'; turnId: string; content: string; deltaCounter: number }
  | { type: 'user.transcript'; turnId: string; content: string }
  | { type: 'data'; turnId: string; content: unknown }
  /** The assistant's reply for the turn is complete (text-wise; audio may still be playing). */
  | { type: 'response.end'; turnId: string }
  /** A notice for the client, e.g. that speech recognition is not configured. Sent once per cause. */
  | { type: 'notice'; code: string; message: string }
  /**
   * The session should end: after `response.hangup` once its farewell has been played (or immediately when
   * nothing is playing), or on a fatal pipeline error.
   */
  | { type: 'hangup'; reason: 'agent_hangup' | 'pipeline_error' }
  /**
   * The agent asked to hand the caller to `to` (`response.transfer`), and its words before that were heard. The
   * session checks the target and asks the carrier; a failure comes back through `callControlFailed`.
   */
  | {
      type: 'transfer'
      turnId: string
      to: string
      callerId?: string | undefined
      headers?: Record<string, string> | undefined
      /** Set for `mode: "warm"`: the session carries the transfer out warm. */
      warm?: WarmTransferCommand | undefined
    }
  /**
   * The backend paused or resumed recording and transcript storage (`response.recording`, in a turn's reply or a
   * data reply): the session acts on it at once.
   */
  | { type: 'recording'; turnId: string; action: 'pause' | 'resume' }
  /** The agent asked that the person on the call be put on the do-not-call list (`response.dnc`). */
  | { type: 'dnc'; turnId: string }
  /** A `response.dtmf` the pipeline could not play; the session reports it to the agent in the error registry's shape. */
  | {
      type: 'call_control.rejected'
      turnId: string
      action: 'dtmf'
      code: 'invalid_dtmf_digits' | 'dtmf_not_supported'
      message: string
      digits: string
    }

/** What the transport tells the pipeline. All methods are cheap and never throw. */
export interface PipelineInput {
  /**
   * Caller audio in the format given at creation, any chunk size. `mediaTimestampMs` is the carrier's timestamp of
   * the chunk (ms since its stream began) when the wire has one: the pipeline does not need it, the session's
   * recording places the audio by it.
   */
  pushAudio(chunk: Buffer, mediaTimestampMs?: number): void
  /** Client-side VAD (browser `vad_events`); `model_failed` means no more will come (server VAD decides). */
  clientVad(event: 'vad_start' | 'vad_end' | 'vad_model_failed'): void
  /** Push-to-talk button pressed / released. */
  pushToTalk(pressed: boolean): void
  /** Typed text from the user (blank text is ignored). */
  userText(text: string): void
  /**
   * Client data relayed to the agent as a `data` event, without touching the current turn. `speakReply: false`
   * (a caller bridged to a human): text in the agent's reply is not spoken, only logged.
   */
  userData(data: unknown, options?: { readonly speakReply?: boolean }): void
  /** A telephone keypad digit (sent to the agent as data `{ dtmf: digit }`). */
  dtmf(digit: string): void
  /** The caller has heard every audio chunk up to and including `chunkId` (carrier mark echo). */
  markPlayed(chunkId: number): void
  /**
   * The transport wrote audio chunk `chunkId` to its socket (not when it queued or dropped it): the turn's
   * `first_frame_out` latency stage.
   */
  audioWritten(chunkId: number): void
  /**
   * The browser played all audio it received for `turnId` (`trigger.response.audio.replay_finished`); without
   * `turnId`, for the current assistant turn. A report naming another turn is ignored.
   */
  replayFinished(turnId?: string): void
  /**
   * A call-control request of the agent failed (a transfer the carrier refused, digits that cannot be played):
   * `apology` (if any) is spoken as an assistant turn of its own, and `data` goes to the agent as a `data` event.
   * Optional: only a pipeline answers it (taps and test inputs need not).
   */
  machineVerdict?(verdict: string): void
  callControlFailed?(failure: { data: unknown; apology?: string | undefined }): void
  /**
   * A warm transfer failed and the caller is back: the agent is asked (`transfer.failed`) like a turn, and
   * a reply with nothing to say is replaced by `defaultLine` so the caller never hears silence.
   */
  transferFailed?(failure: { reason: string; to: string; defaultLine: string | undefined }): void
}

/** Latency figures of one turn, in ms. */
export interface TurnLatency {
  /** End of user speech -> the furthest output stage reached (the breakdown's last stage). */
  totalMs: number | null
  /** Time spent in the customer backend / LLM: request sent -> first byte. */
  agentMs: number | null
  /** Time spent in TTS: first text -> first audio. */
  ttsMs: number | null
  /** What is left: the gateway's own share. */
  gatewayMs: number | null
}

/** A finished exchange, for the transcript. */
export interface CompletedTurn {
  turnId: string
  timestamp: Date
  userMessage: string | null
  assistantMessage: string | null
  /** The breakdown's total, rounded: end of user speech -> first audio heard (or the furthest output stage). */
  latencyMs: number | null
  latency: TurnLatency
  /** The stages of `latencyMs`; null exactly when `latencyMs` is. */
  latencyBreakdown: LatencyBreakdown | null
  /** Wall-clock time of the breakdown's origin (the end of the user's speech); null without a breakdown. */
  latencyOrigin: Date | null
  interrupted: boolean
  /** Why the turn failed and what the caller heard instead; null for a good turn. */
  failure: TurnFailure | null
  /** Why the caller's turn ended when it did (`complete_answer`, `extended: incomplete_number`, ...); null without one. */
  turnEnd: TurnEndReason | null
}

/** What the pipeline reports to its session. */
export interface PipelineHooks {
  turnCompleted(turn: CompletedTurn): void
  /** The user spoke, typed or pressed a key (silence timeout). */
  userActivity(): void
  /**
   * The words of a caller's STT segment, as the STT timed them, in seconds of the caller's audio since the pipeline
   * began (the recording silences redacted ones). Only for STT vendors that time words.
   */
  sttWords?(words: readonly { word: string; start: number; end: number }[]): void
  /** Seconds of user speech transcribed / of speech generated. */
  usage(u: { transcriptionSeconds?: number; ttsSeconds?: number }): void
  /**
   * The agent answered a turn request (`welcome` or `message`): `delivered` when its reply ended normally,
   * `failed` on an error (backend error, timeout, malformed reply), `cancelled` when barge-in or the session's
   * end aborted it.
   */
  agentRequestDone?(e: { kind: 'welcome' | 'message'; outcome: 'delivered' | 'failed' | 'cancelled' }): void
}
