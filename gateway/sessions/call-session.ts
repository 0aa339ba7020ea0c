import { newTurnId, resolveSessionConfig } from '../../pipeline/index.js'
import type { PipelineConfig, PipelineInput, SessionWebhookEvent } from '../../pipeline/index.js'
import type { SessionRow } from '../store/schema.js'
import type { EndReason } from '../../core/end-reason.js'
import { getAgentRow } from '../store/agents.js'
import { getOrganizationRow } from '../store/organizations.js'
import type { TranscriptTurn } from '../store/sessions.js'
import { endUnstartedSession } from './session-end.js'
import { writeSessionEnd } from './session-end-writes.js'
import type { SessionTransport } from './ports/session-port.js'
import { LifecycleWebhooks } from './lifecycle-webhooks.js'
import type { SessionDeps, SessionUsage } from './session-deps.js'
import { sessionStartEvent } from './lifecycle-events.js'
import { liveUsage, type LiveUsage } from './session-details.js'
import { transfererFor } from './carrier/call-transfer.js'
import type { MachineVerdict } from '../../core/machine-verdict.js'
import { SessionCallControl } from './session-call-control.js'
import type { TurnToStore } from './transcript/turn-redactor.js'
import { SessionKeeping } from './session-keeping.js'
import { SessionPipeline } from './session-pipeline.js'
import type { WarmTransferSlot } from './ports/warm-transfer-port.js'
import { type HoldKind, SessionClocks } from './session-clocks.js'

/**
 * One connected session: owns its row, lease release, timeouts, transcript, lifecycle webhooks and (with the
 * pipeline) the voice loop. It has one AbortController; `end()` runs once whatever ends it and always
 * persists what it has.
 */
export class CallSession {
  readonly #abort = new AbortController()
  /** The duration limit (extended by time on hold), the user-silence timeout and the holds. */
  readonly #clocks: SessionClocks
  /** Transcript, recording and the backend's pauses of both, under the agent's privacy block. */
  readonly #keeping: SessionKeeping
  #ending: Promise<void> | undefined
  /** The transport closed itself: it is not told to close again. */
  #transportGone = false
  readonly #webhooks: LifecycleWebhooks
  /** The voice pipeline: its start, the caller-input chain into it, and where its events go. */
  readonly #pipeline: SessionPipeline
  readonly usage: SessionUsage = { transcriptionSeconds: 0, ttsSeconds: 0, latencySamples: [] }
  /** The welcome turn's id, named by both `session.start` webhooks (lifecycle and agent) before the turn begins. */
  readonly welcomeTurnId = newTurnId('assistant')
  /** Resolves when the session has ended and its end was persisted. */
  readonly ended: Promise<EndReason>
  #resolveEnded!: (r: EndReason) => void

  readonly #deps: SessionDeps
  readonly #transport: SessionTransport
  /** Transfer, call-control failures and machine detection (additions to the SPEC). */
  readonly #control: SessionCallControl
  /** A warm transfer's slot (phone calls of a process that can dial one). */
  readonly #warm: WarmTransferSlot | undefined
  private constructor(
    deps: SessionDeps,
    readonly row: SessionRow,
    readonly config: PipelineConfig,
    readonly webhookSecret: string,
    organizationRecords: boolean,
    transport: SessionTransport,
  ) {
    this.#deps = deps
    this.#transport = transport
    this.#keeping = new SessionKeeping({
      db: deps.db,
      log: deps.log,
      row,
      config,
      organizationRecords,
      recording: deps.recording,
      transport,
    })
    this.ended = new Promise((r) => (this.#resolveEnded = r))
    this.#clocks = new SessionClocks({
      ...{ config, minuteMs: deps.minuteMs ?? 60_000, isTransferring: () => this.#warm?.active === true },
      ...{ end: (r) => void this.end(r), recordingHeld: (kind, on) => this.#keeping.recording?.held(kind, on) },
    })
    this.#warm = deps.warmTransfer?.({
      ...{ log: deps.log, vendors: deps.vendors, row, config, transport, signal: this.#abort.signal },
      ...{ input: () => this.#pipeline.input, end: (r) => this.end(r), recording: () => this.#keeping.recording },
      held: (on) => this.held('transfer_hold', on),
      emit: (event, build) => this.#emitLifecycle(event as SessionWebhookEvent, build),
      customMetadata: () => this.#customMetadata,
    })
    this.#control = new SessionCallControl(
      {
        row,
        channel: transport.kind,
        peerAllows: transport.peerAllows,
        signal: this.#abort.signal,
        isEnded: () => this.isEnded,
        input: () => this.#pipeline.input,
        deliver: (e) => this.#transport.deliver?.(e),
        end: (r) => this.end(r),
      },
      { ...deps, callTransfer: transfererFor(transport, deps), warm: this.#warm },
      transport.audio?.input === 'ulaw_8000',
    )
    this.#webhooks = new LifecycleWebhooks(deps, row, config, webhookSecret)
    this.#pipeline = new SessionPipeline({
      ...{ deps, row, config, webhookSecret, welcomeTurnId: this.welcomeTurnId, transport, usage: this.usage },
      ...{ signal: this.#abort.signal, keeping: this.#keeping, control: this.#control, warm: this.#warm },
      isEnded: () => this.isEnded,
      end: (r) => void this.end(r),
      addTurn: (turn, extra) => this.addTurn(turn, extra),
      noteUserActivity: () => this.noteUserActivity(),
    })
  }

  /**
   * Builds the session for a row that was just started (key consumed, lease held) and starts its timers and
   * `session.start`. A session whose agent or config vanished in between is ended at once with `error`.
   */
  static async begin(deps: SessionDeps, row: SessionRow, transport: SessionTransport): Promise<CallSession> {
    const agent = await getAgentRow(deps.db, row.organization_id, row.agent_id)
    const org = await getOrganizationRow(deps.db, row.organization_id)
    const resolved =
      agent === undefined ? undefined : resolveSessionConfig(agent.config, row.config_override ?? undefined, deps.webhookPolicy)
    if (agent === undefined || resolved === undefined || !resolved.ok) {
      deps.log.error({ session_id: row.id }, 'session cannot start: agent or config no longer valid')
      await endUnstartedSession(deps, row.id)
      throw new Error('session configuration is no longer valid')
    }
    const s = new CallSession(deps, row, resolved.config, agent.webhook_secret, org?.recording_enabled ?? false, transport)
    s.#keeping.start()
    s.#pipeline.listen()
    s.#clocks.start()
    s.#emitLifecycle('session.start', () => sessionStartEvent(row, s.welcomeTurnId, s.#customMetadata))
    if (transport.deliver !== undefined) await s.#pipeline.start()
    return s
  }

  /** The kind of transport carrying the session (`browser`, `carrier`; `test` for in-memory ones). */
  get channel(): SessionTransport['kind'] {
    return this.#transport.kind
  }

  /** What the transport feeds the voice pipeline (caller audio, text, data, playback reports). */
  get input(): PipelineInput {
    return this.#pipeline.input
  }

  /** What answered this outbound call (answering machine detection); see SessionCallControl. */
  machineVerdict(verdict: MachineVerdict): void {
    this.#control.machineVerdict(verdict)
  }

  get id(): string {
    return this.row.id
  }
  get conversationId(): string {
    return this.row.conversation_id
  }
  /** Aborted when the session ends; every operation of the session listens to it. */
  get signal(): AbortSignal {
    return this.#abort.signal
  }
  get isEnded(): boolean {
    return this.#ending !== undefined
  }
  get #customMetadata(): Record<string, unknown> | undefined {
    return this.config.session_webhook?.custom_metadata
  }
  /** The user spoke or typed: restarts the user-silence timeout when one is configured. */
  noteUserActivity(): void {
    if (!this.isEnded) this.#clocks.noteUserActivity()
  }

  /** The caller was put on hold or taken off it: the duration limit does not count it, the recording lists it. */
  held(kind: HoldKind, on: boolean): void {
    if (!this.isEnded) this.#clocks.held(kind, on)
  }

  /**
   * Stores one finished turn at once (a crash later loses nothing already said), redacted as the agent's privacy
   * block says (a turn ending in a number waits for the next caller turn: privacy/turn-redactor.ts); the call
   * never waits for it, and a database that is away gets it once back (transcript-writer.ts).
   */
  addTurn(turn: TranscriptTurn, extra: Omit<TurnToStore, 'turn'> & { userSpeechEndedAt?: Date | null } = {}): void {
    if (turn.latencyMs !== null) this.usage.latencySamples.push(turn.latencyMs)
    this.#keeping.addTurn(turn, extra)
  }

  /** Stops retrying unwritten turns (process shutdown, after the session ended). */
  stopTranscriptRetries(): void {
    this.#keeping.stopTranscriptRetries()
  }

  /** The usage so far, rounded as it is stored at the end: session details of a live session report it. */
  usageSoFar(): LiveUsage {
    return liveUsage(this.usage)
  }

  /** Ends the session once: stops timers, aborts work, persists, sends `session.end`, closes the transport. */
  end(endReason: EndReason): Promise<void> {
    const reason = this.#ending === undefined ? (this.#warm?.ending(endReason) ?? endReason) : endReason
    const deferred = this.#ending === undefined ? this.#control.deferredEnd(reason) : undefined
    if (deferred !== undefined) {
      this.#ending = deferred.then((r) => this.#finish(r))
      return this.#ending
    }
    this.#ending ??= this.#finish(reason)
    return this.#ending
  }

  /** Ends the session because the transport closed (the transport is not told to close again). */
  transportClosed(reason: EndReason = 'client_disconnected'): Promise<void> {
    this.#transportGone = true
    return this.end(reason)
  }

  async #finish(reason: EndReason): Promise<void> {
    this.#clocks.stop()
    this.#pipeline.close()
    this.#abort.abort(new Error(`session ended: ${reason}`))
    if (!this.#transportGone) {
      try {
        this.#transport.close(reason)
      } catch (e) {
        this.#deps.log.warn({ err: e, session_id: this.row.id }, 'transport close failed')
      }
    }
    await writeSessionEnd({
      deps: this.#deps,
      row: this.row,
      end: { endReason: reason, ...this.usageSoFar(), transferredTo: reason === 'transferred' ? this.#control.transferredTo : undefined },
      keeping: this.#keeping,
      customMetadata: this.#customMetadata,
      emit: (event, build) => this.#emitLifecycle(event, build),
    })
    this.#resolveEnded(reason)
  }

  #emitLifecycle(event: SessionWebhookEvent, build: () => { type: string } & Record<string, unknown>): void {
    this.#webhooks.emit(event, build)
  }

  /** Waits until queued lifecycle webhooks are delivered or given up (shutdown uses it). */
  drainWebhooks(timeoutMs: number): Promise<void> {
    return this.#webhooks.drain(timeoutMs)
  }

  /** Delivery results so far (tests and diagnostics). */
  get webhookResults() {
    return this.#webhooks.results
  }
}
