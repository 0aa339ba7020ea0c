import type { Log } from '../../core/log.js'
import type { Metrics } from '../../core/metrics.js'
import type { PipelineConfig, CompletedTurn, PipelineHooks, TimedWord } from '../../pipeline/index.js'
import type { SessionRow, StoredTurnFailure } from '../store/schema.js'
import type { TranscriptTurn } from '../store/sessions.js'

/** What the pipeline's hooks report to: one session. */
export interface HooksTarget {
  readonly row: SessionRow
  readonly config: PipelineConfig
  readonly metrics: Metrics
  readonly log: Log
  readonly usage: { transcriptionSeconds: number; ttsSeconds: number }
  addTurn(turn: TranscriptTurn, extra: { userSpeechEndedAt?: Date | null }): void
  noteUserActivity(): void
  sttWords(words: readonly TimedWord[]): void
}

/**
 * The hooks a session's pipeline reports through: finished turns to the transcript (and their latency and
 * failures to the metrics), user activity to the silence timeout, timed words to the recording, usage.
 */
export function sessionPipelineHooks(s: HooksTarget): PipelineHooks {
  return {
    turnCompleted: (t) => {
      s.log.debug({ turn_id: t.turnId, latency: t.latency, interrupted: t.interrupted, turn_end: t.turnEnd }, 'turn completed')
      if (t.latencyMs !== null && t.latencyBreakdown !== null && t.latencyOrigin !== null) {
        const turn = { sessionId: s.row.id, turnId: t.turnId, origin: t.latencyOrigin, failureCause: t.failure?.cause }
        s.metrics.turnLatency(t.latencyMs, t.latencyBreakdown.stages, turn)
      }
      s.addTurn(
        {
          turnId: t.turnId,
          timestamp: t.timestamp,
          userMessage: t.userMessage,
          assistantMessage: t.assistantMessage,
          latencyMs: t.latencyMs,
          latencyBreakdown: t.latencyBreakdown,
          failure: storedFailure(t.failure),
          turnEnd: t.turnEnd,
        },
        { userSpeechEndedAt: t.latencyOrigin },
      )
      if (t.failure !== null) {
        s.log.info({ turn_id: t.turnId, cause: t.failure.cause, waited_ms: t.failure.waitedMs }, 'turn failed')
        s.metrics.turnFailed(t.failure.cause)
      }
    },
    userActivity: () => s.noteUserActivity(),
    sttWords: (words) => s.sttWords(words),
    agentRequestDone: (e) => {
      // Only `agent.webhook` sends webhooks; the built-in LLM step's requests are not deliveries.
      if (s.config.plugins.some((p) => p.use === 'agent.webhook')) s.metrics.webhookDelivery('agent', e.outcome)
    },
    usage: (u) => {
      s.usage.transcriptionSeconds += u.transcriptionSeconds ?? 0
      s.usage.ttsSeconds += u.ttsSeconds ?? 0
    },
  }
}

/** A pipeline's turn failure in the stored shape (the session details' `failure`). */
function storedFailure(f: CompletedTurn['failure']): StoredTurnFailure | null {
  return f === null ? null : { cause: f.cause, waited_ms: f.waitedMs, heard: f.heard, detail: f.detail }
}
