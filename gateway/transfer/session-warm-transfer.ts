/**
 * A session's warm transfer: `response.transfer` with `mode: "warm"` on a phone call. The request is
 * checked (core/warm-transfer-request.ts), then a `WarmTransferDriver` runs it over the carrier's legs
 * (transfer/carrier-warm-transfer.ts). While it runs the agent does not hear the caller (`gate`); the caller's
 * audio goes to the transfer instead (the bridge, once connected). It ends with the session: the human's leg is
 * hung up and nothing more runs.
 */
import type { EndReason } from '../../core/end-reason.js'
import type { Log } from '../../core/log.js'
import { type Metrics, NO_METRICS } from '../../core/metrics.js'
import type { WarmTransferRequest } from '../../core/warm-transfer-request.js'
import {
  type InputAudioFormat,
  openSessionStt,
  type OutputAudioFormat,
  type PipelineInput,
  redact,
  resolvePrivacy,
  TRANSFER_FAILED_DEFAULT_LINES,
  tapInput,
} from '../../pipeline/index.js'
import { NO_VENDORS } from '../sessions/no-input.js'
import type { WarmTransferSession, WarmTransferSlot } from '../sessions/ports/warm-transfer-port.js'
import { speakOnce } from './speak-once.js'
import type { HoldMusic, HoldMusicCache } from './hold-music.js'
import { transferLifecycleEvent } from './transfer-events.js'
import type { SessionRow } from '../store/schema.js'
import { recordTransferFact, recordTransferLine } from '../store/session-transfers.js'
import type { BridgeTranscriberDeps } from './bridge-transcriber.js'
import { CarrierWarmTransfer, type CarrierWarmTransferDeps } from './carrier-warm-transfer.js'
import type { WarmTransferSessionSide } from './human-leg-transfer.js'
import { SipWarmTransfer, type SipWarmTransferDeps } from './sip-warm-transfer.js'
import type { TransferFact, TransferFailureReason } from './transfer-steps.js'
import { REAL_CLOCK, WarmTransferDriver, type DriverClock } from './warm-transfer-driver.js'

/** What the process gives warm transfers: the carrier's Calls API, and the SIP endpoint for SIP callers. */
export interface WarmTransferDeps extends CarrierWarmTransferDeps {
  /** The SIP side (a SIP caller's human is dialled through the organization's trunk); absent: SIP callers cannot. */
  readonly sip?: SipWarmTransferDeps | undefined
  /** The process's hold music files (agents' `transfer.hold_audio_url`); absent: the built-in hold audio only. */
  readonly holdMusic?: HoldMusicCache | undefined
}

/** What the caller hears when the backend's reply to `transfer.failed` says nothing (from the pipeline's table). */
export type DefaultLines = Readonly<Partial<Record<TransferFailureReason, string>>>

/** The session as its warm transfer sees it. */
export interface WarmTransferHost {
  readonly row: SessionRow
  /** The caller's channel: a SIP caller's human is dialled through a SIP trunk, the others' through the carrier. */
  readonly channel: 'browser' | 'carrier' | 'sip'
  readonly log: Log
  readonly signal: AbortSignal
  input(): PipelineInput
  /** The caller's audio formats (mu-law 8 kHz on a phone; PCM16 8 kHz in, 16 kHz out in a browser). */
  readonly callerAudio: { readonly input: InputAudioFormat; readonly output: OutputAudioFormat }
  /** Raw audio in the caller's output format to the caller, and dropping what is queued. */
  playToCaller(audio: Buffer): void
  /** The bridged human's audio, for the recording (what the caller heard). */
  recordHeard(audio: Buffer): void
  clearCaller(): void
  /** The caller is on the transfer's hold (`on`) or not any more. */
  held?(on: boolean): void
  /** The agent's voice in mu-law 8 kHz (for the human's leg). */
  speak(text: string, signal: AbortSignal, onAudio?: (audio: Buffer) => void): Promise<Buffer>
  /** The agent's voice in the caller's output format (the hold line). */
  speakToCaller(text: string, signal: AbortSignal, onAudio?: (audio: Buffer) => void): Promise<Buffer>
  end(reason: EndReason): Promise<void>
  /** A lifecycle fact of the transfer (webhook and log). */
  report(fact: TransferFact, to: string): void
  /** Speech-to-text of the bridged legs (a request with `transcribe`), and where their finals go. */
  readonly bridgeTranscription?: Pick<BridgeTranscriberDeps, 'openStt' | 'heard'> | undefined
  /** The agent's `transfer.hold_audio_url`, if any. */
  readonly holdAudioUrl?: string | undefined
}

/** One session's warm transfer slot (one transfer at a time). */
export class SessionWarmTransfer implements WarmTransferSlot {
  readonly #host: WarmTransferHost
  readonly #deps: () => WarmTransferDeps
  readonly #defaultLines: DefaultLines
  readonly #clock: DriverClock
  #driver: WarmTransferDriver | undefined
  /** The running request's `forward_data`. */
  #forwardData = false
  readonly #callerListeners = new Set<(audio: Uint8Array) => void>()

  constructor(host: WarmTransferHost, deps: () => WarmTransferDeps, defaultLines: DefaultLines, clock: DriverClock = REAL_CLOCK) {
    this.#host = host
    this.#deps = deps
    this.#defaultLines = defaultLines
    this.#clock = clock
    host.signal.addEventListener('abort', () => this.#driver?.abort(), { once: true })
  }

  /** True while a transfer runs (dialling to bridged): the agent does not hear the caller. */
  get active(): boolean {
    return this.#driver?.active ?? false
  }

  /** Starts the transfer (the request is checked); false when one is already running. */
  start(request: WarmTransferRequest): boolean {
    if (this.active || this.#host.signal.aborted) return false
    const host = this.#host
    const row = host.row
    const to = request.target.to
    const log = host.log.child({ transfer_to: to })
    let driver: WarmTransferDriver | undefined
    const deps = this.#deps()
    const url = host.holdAudioUrl
    let music: HoldMusic | undefined = url === undefined ? undefined : deps.holdMusic?.ready(url)
    // The first time, loaded while the human is dialled: the built-in hold audio plays until it is there.
    if (url !== undefined && music === undefined && deps.holdMusic !== undefined) {
      void deps.holdMusic.load(url, log).then((m) => (music = m))
    }
    const side: WarmTransferSessionSide = {
      row,
      log,
      // The number of the person on the line (inbound: who called; outbound: who was called), else the agent's
      // (a browser caller has no number: the transfer uses the agent's first).
      callerId: (row.direction === 'inbound' ? row.from_phone_number : row.to_phone_number) ?? row.to_phone_number ?? undefined,
      callerAudio: host.callerAudio,
      playToCaller: (audio) => host.playToCaller(audio),
      recordHeard: (audio) => host.recordHeard(audio),
      clearCaller: () => host.clearCaller(),
      held: (on) => host.held?.(on),
      holdMusic: () => music,
      speak: (text, signal, onAudio) => host.speak(text, signal, onAudio),
      speakToCaller: (text, signal, onAudio) => host.speakToCaller(text, signal, onAudio),
      listenToCaller: (listener) => {
        this.#callerListeners.add(listener)
        return () => this.#callerListeners.delete(listener)
      },
      returnToAgent: (reason) => {
        log.info({ reason }, 'warm transfer failed: the caller is back with the agent')
        host.input().transferFailed?.({ reason, to, defaultLine: this.#defaultLines[reason] })
      },
      endSession: (endedBy) => void host.end(endedBy === 'human' ? 'transfer_human_hangup' : 'transfer_caller_hangup'),
      report: (fact) => host.report(fact, to),
      input: (input) => driver?.input(input),
      bridgeTranscription: host.bridgeTranscription,
    }
    const io =
      host.channel === 'sip'
        ? new SipWarmTransfer(deps.sip ?? { db: deps.db }, side, request)
        : new CarrierWarmTransfer(deps, side, request)
    driver = new WarmTransferDriver(
      { whisper: request.whisper, hold: request.hold, accept: request.accept, timeoutMs: request.timeoutMs },
      io,
      this.#clock,
      (step, err) => log.warn({ err, step }, 'warm transfer step failed'),
    )
    this.#driver = driver
    this.#forwardData = request.forwardData
    log.info({ accept: request.accept, timeout_ms: request.timeoutMs }, 'warm transfer started')
    driver.start()
    return true
  }

  /**
   * The session is ending with `reason`: a caller who hangs up during the transfer fails it (`caller_hung_up`, the
   * human's leg hung up), and once bridged the end says the caller hung up. Returns the reason to end with.
   */
  ending(reason: EndReason): EndReason {
    const driver = this.#driver
    if (driver === undefined || !driver.active) return reason
    const callerLeft = reason === 'caller_hangup' || reason === 'client_disconnected'
    const bridged = driver.bridged
    if (callerLeft) driver.input({ type: 'caller_hangup' })
    driver.abort()
    return bridged && callerLeft ? 'transfer_caller_hangup' : reason
  }

  /**
   * `input` with everything of the caller kept from the agent while a transfer runs: audio goes to the transfer (the
   * bridge, once connected); keys, VAD events, push-to-talk and typed text are dropped, so no user turn and no
   * assistant turn can start over the hold or the bridge; `data` reaches the agent only when the request asked for it
   * (`forward_data`). The acknowledgements of the agent's own audio pass, whatever the state.
   */
  gate(input: PipelineInput): PipelineInput {
    const open = () => !this.active
    // The acknowledgements of the agent's own audio (marks, writes, replays) and the pipeline's own calls pass as they are.
    return tapInput(input, {
      pushAudio: (chunk, mediaTimestampMs) => {
        if (open()) return input.pushAudio(chunk, mediaTimestampMs)
        for (const listener of this.#callerListeners) listener(chunk)
      },
      dtmf: (digit) => {
        if (open()) input.dtmf(digit)
      },
      clientVad: (event) => {
        if (open()) input.clientVad(event)
      },
      pushToTalk: (pressed) => {
        if (open()) input.pushToTalk(pressed)
      },
      userText: (text) => {
        if (open()) input.userText(text)
      },
      userData: (data, options) => {
        if (open()) input.userData(data, options)
        // Relayed, but whatever the reply says is not spoken over the hold or the bridge.
        else if (this.#forwardData) input.userData(data, { speakReply: false })
      },
    })
  }
}

/** The warm transfer of a session whose transport plays audio to its caller; undefined otherwise (a text-only caller). */
export function sessionWarmTransfer(
  s: WarmTransferSession,
  deps: () => WarmTransferDeps,
  metrics: Pick<Metrics, 'warmTransfer'> = NO_METRICS,
): SessionWarmTransfer | undefined {
  const { transport, row } = s
  const play = transport.play
  const callerAudio = transport.audio
  // Phone callers on the carrier path and browser callers (the human is dialled through the organization's carrier),
  // and SIP callers (through the organization's outbound SIP trunk).
  if (play === undefined || callerAudio === undefined) return undefined
  const log = s.log.child({ session_id: row.id })
  let stored: Promise<void> = Promise.resolve()
  let startedAt = new Date()
  const privacy = resolvePrivacy(s.config.privacy)
  return new SessionWarmTransfer(
    {
      row,
      channel: transport.kind,
      log,
      signal: s.signal,
      input: () => s.input(),
      playToCaller: (audio) => play.call(transport, audio),
      recordHeard: (audio) => s.recording()?.heardLive(audio),
      clearCaller: () => transport.deliver?.({ type: 'clear_playback', turnId: 'transfer' }),
      held: (on) => s.held(on),
      holdAudioUrl: s.config.transfer?.hold_audio_url,
      callerAudio,
      speak: (text, signal, onAudio) => speakOnce(text, { config: s.config, vendors: s.vendors ?? NO_VENDORS, log, signal, onAudio }),
      speakToCaller: (text, signal, onAudio) =>
        speakOnce(text, { config: s.config, vendors: s.vendors ?? NO_VENDORS, log, signal, onAudio, outputFormat: callerAudio.output }),
      end: (reason) => s.end(reason),
      report: (fact, to) => {
        log.info(
          { event: fact.type, elapsed_ms: fact.atMs, ...(fact.type === 'transfer.failed' && { reason: fact.reason }) },
          'warm transfer',
        )
        const at = new Date()
        s.emit(fact.type, () => transferLifecycleEvent(row, fact, { to, at }, s.customMetadata()))
        if (fact.type === 'transfer.started') startedAt = at
        else if (fact.type === 'transfer.connected' || fact.type === 'transfer.failed') {
          const outcome = fact.type === 'transfer.connected' ? 'connected' : fact.reason
          metrics.warmTransfer({ sessionId: row.id, startedAt, outcome, answeredAfterMs: fact.answeredAtMs, endedAfterMs: fact.atMs })
        }
        // On the row for the details and the console, one write after another (a fact may follow within a ms).
        stored = stored
          .then(() => recordTransferFact(deps().db, row.id, fact, to, at))
          .catch((err: unknown) => log.warn({ err, event: fact.type }, 'warm transfer fact not stored'))
      },
      bridgeTranscription: {
        openStt: (format, signal) => openSessionStt(s.config, s.vendors ?? NO_VENDORS, { format, signal, logger: log }),
        heard: (speaker, text) => {
          // Redacted as the agent's transcripts are; stored after the facts before it.
          const line = { speaker, text: redact(text, { redact: privacy.redact }).text, at_ms: Date.now() - startedAt.getTime() }
          stored = stored
            .then(() => recordTransferLine(deps().db, row.id, line))
            .catch((err: unknown) => log.warn({ err }, 'bridged transcript line not stored'))
        },
      },
    },
    deps,
    TRANSFER_FAILED_DEFAULT_LINES,
  )
}
