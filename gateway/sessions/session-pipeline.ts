import type { EndReason } from '../../core/end-reason.js'
import { NO_METRICS } from '../../core/metrics.js'
import type { PipelineConfig, PipelineEvent, PipelineInput } from '../../pipeline/index.js'
import type { SessionRow } from '../store/schema.js'
import { callerInput } from './caller-input.js'
import { NO_INPUT, NO_VENDORS } from './no-input.js'
import { startPipeline } from './ports/pipeline-factory.js'
import type { SessionTransport } from './ports/session-port.js'
import type { WarmTransferSlot } from './ports/warm-transfer-port.js'
import type { SessionCallControl } from './session-call-control.js'
import type { SessionDeps, SessionUsage } from './session-deps.js'
import { type HooksTarget, sessionPipelineHooks } from './session-hooks.js'
import type { SessionKeeping } from './session-keeping.js'

/** What a session's pipeline link needs from its session. */
export interface SessionPipelineDeps {
  deps: SessionDeps
  row: SessionRow
  config: PipelineConfig
  webhookSecret: string
  welcomeTurnId: string
  transport: SessionTransport
  usage: SessionUsage
  /** Aborted when the session ends. */
  signal: AbortSignal
  keeping: SessionKeeping
  control: SessionCallControl
  warm: WarmTransferSlot | undefined
  isEnded(): boolean
  end(reason: EndReason): void
  addTurn: HooksTarget['addTurn']
  noteUserActivity(): void
}

/**
 * A session's side of its voice pipeline: what the transport feeds goes through the caller-input chain (to the
 * recording alone until the pipeline runs), the pipeline is started with the session's hooks, and its events go
 * to the transport, the recording and call control; a hangup ends the session.
 */
export class SessionPipeline {
  readonly #d: SessionPipelineDeps
  #input: PipelineInput = NO_INPUT
  #close: () => void = () => undefined

  constructor(d: SessionPipelineDeps) {
    this.#d = d
  }

  /** What the transport feeds the voice pipeline (caller audio, text, data, playback reports). */
  get input(): PipelineInput {
    return this.#input
  }

  /** Caller audio is recorded from the first frame, also while the pipeline is still starting. */
  listen(): void {
    this.#input = callerInput(this.#d)
  }

  /** Starts the pipeline; one that cannot start ends the session with `error`. */
  async start(): Promise<void> {
    const d = this.#d
    const log = d.deps.log.child({ session_id: d.row.id })
    try {
      const p = await startPipeline({
        db: d.deps.db,
        row: d.row,
        config: d.config,
        webhookSecret: d.webhookSecret,
        welcomeTurnId: d.welcomeTurnId,
        audio: d.transport.audio,
        vendors: d.deps.vendors ?? NO_VENDORS,
        createVad: d.deps.createVad,
        webhookFetch: d.deps.webhookDelivery?.fetch,
        webhookPrivateTarget: d.deps.webhookDelivery?.privateTarget,
        log,
        signal: d.signal,
        emit: (e) => this.#onEvent(e),
        hooks: sessionPipelineHooks({
          row: d.row,
          config: d.config,
          metrics: d.deps.metrics ?? NO_METRICS,
          log,
          usage: d.usage,
          addTurn: (turn, extra) => d.addTurn(turn, extra),
          noteUserActivity: () => d.noteUserActivity(),
          sttWords: (words) => d.keeping.sttWords(words),
        }),
      })
      if (d.isEnded()) {
        p.close()
        return
      }
      this.#input = callerInput(d, p)
      this.#close = () => p.close()
      d.control.pipelineStarted()
    } catch (e) {
      log.error({ err: e }, 'voice pipeline could not start')
      d.end('error')
    }
  }

  /** The session ended: input is dropped from now on and the pipeline closes. */
  close(): void {
    this.#input = NO_INPUT
    this.#close()
  }

  #onEvent(e: PipelineEvent): void {
    const d = this.#d
    if (d.isEnded()) return
    try {
      d.transport.deliver?.(e)
    } catch (err) {
      d.deps.log.warn({ err, session_id: d.row.id }, 'transport failed to deliver an event')
    }
    try {
      d.keeping.recording?.onEvent(e)
    } catch (err) {
      d.deps.log.warn({ err, session_id: d.row.id }, 'recording failed to take an event')
    }
    if (e.type === 'hangup') d.end(e.reason === 'agent_hangup' ? 'hangup' : 'error')
    else if (e.type === 'recording') d.keeping.recordingCommand(e.action)
    else d.control.onPipelineEvent(e)
  }
}
