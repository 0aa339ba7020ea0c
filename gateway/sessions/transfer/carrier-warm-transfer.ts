/**
 * A warm transfer of a phone caller on the carrier path: the `WarmTransferIo` the driver uses. The human
 * is dialled through the organization's Calls API with `<Connect><Stream>` markup whose URL carries a `tl_` token
 * (transfer-legs.ts), and callbacks with `?leg=<token>`; the caller hears the hold line and hold audio meanwhile;
 * the whisper goes to the human's stream only; the bridge relays both streams' frames as they arrive.
 */
import type { Kysely } from 'kysely'
import type { Log } from '../../../core/log.js'
import type { CallStatus } from '../../../core/call-status.js'
import type { WarmTransferRequest } from '../../../core/warm-transfer-request.js'
import type { InputAudioFormat, OutputAudioFormat } from '../../../pipeline/index.js'
import { getCarrierCredentials } from '../../store/organizations.js'
import { listPhoneNumbers } from '../../store/phone-numbers.js'
import type { Database, SessionRow } from '../../store/schema.js'
import type { CallCarrier } from '../call-carrier.js'
import type { BridgeLeg } from './bridge-leg.js'
import type { BridgeTranscriberDeps } from './bridge-transcriber.js'
import { type CallerBridge, bridgeCaller } from './caller-bridge.js'
import { CallerHold } from './caller-hold.js'
import type { HoldMusic } from './hold-music.js'
import type { LegMediaIn, LegMediaOut, TransferLegHandler, TransferLegs } from '../transfer-legs.js'
import type { HumanLegProgress, TransferEndedBy, TransferFact, TransferFailureReason, TransferInput } from './transfer-steps.js'
import type { WarmTransferIo } from './warm-transfer-driver.js'

/** What the process gives every warm transfer on the carrier path. */
export interface CarrierWarmTransferDeps {
  readonly db: Kysely<Database>
  readonly carrier: Pick<CallCarrier, 'callsClient' | 'markup' | 'mediaStream'>
  readonly legs: TransferLegs
  readonly publicUrl: string
  /** Public URLs of the carrier's status and machine detection callbacks (`?leg=` is added). */
  readonly statusCallbackUrl: string
  readonly machineDetectionUrl: string
}

/** What the session gives its transfer. */
export interface WarmTransferSessionSide {
  readonly row: SessionRow
  readonly log: Log
  /**
   * Caller id of the human's leg: the caller's number by default (`caller_id` of the command overrides it); undefined
   * when the caller has none (a browser), and then the agent's first phone number is used.
   */
  readonly callerId: string | undefined
  /** The caller's audio formats: what `listenToCaller` gives and `playToCaller` takes (mu-law 8 kHz on a phone). */
  readonly callerAudio: { readonly input: InputAudioFormat; readonly output: OutputAudioFormat }
  /** Plays raw audio in the caller's output format to the caller, in order (no marks). */
  playToCaller(audio: Buffer): void
  /** Drops what the caller has queued and not heard (the end of hold audio). */
  clearCaller(): void
  /** The caller is on the transfer's hold or not any more (the session's clocks and recording). */
  held?(on: boolean): void
  /** The agent's hold music once loaded; undefined: the built-in hold audio. */
  holdMusic?(): HoldMusic | undefined
  /** The bridged human's audio, as the caller heard it (the recording). */
  recordHeard(audio: Buffer): void
  /** The agent's voice for the human: `text` as mu-law 8 kHz, whole at the end; `onAudio` gets each piece as it comes. */
  speak(text: string, signal: AbortSignal, onAudio?: (audio: Buffer) => void): Promise<Buffer>
  /** The agent's voice for the caller, in the caller's output format. */
  speakToCaller(text: string, signal: AbortSignal, onAudio?: (audio: Buffer) => void): Promise<Buffer>
  /** Listens to the caller's audio (while the agent does not); returns the unlisten. */
  listenToCaller(listener: (audio: Uint8Array) => void): () => void
  returnToAgent(reason: TransferFailureReason): void
  endSession(endedBy: TransferEndedBy): void
  report(fact: TransferFact): void
  /** An input for the driver (from the human's leg and the carrier). */
  input(input: TransferInput): void
  /** Speech-to-text for the bridged legs when the request asks to transcribe them, and where their finals go. */
  readonly bridgeTranscription?: Pick<BridgeTranscriberDeps, 'openStt' | 'heard'> | undefined
}

/** The carrier `WarmTransferIo` of one transfer. */
export class CarrierWarmTransfer implements WarmTransferIo, TransferLegHandler {
  readonly #deps: CarrierWarmTransferDeps
  readonly #side: WarmTransferSessionSide
  readonly #request: WarmTransferRequest
  credentials: TransferLegHandler['credentials']
  #token: string | undefined
  #callSid: string | undefined
  #out: LegMediaOut | undefined
  #humanListeners = new Set<(audio: Uint8Array) => void>()
  #whisperDone: (() => void) | undefined
  #whisperSeq = 0
  readonly #hold: CallerHold
  #bridge: CallerBridge | undefined
  #hungUp = false
  #legEnded = false

  constructor(deps: CarrierWarmTransferDeps, side: WarmTransferSessionSide, request: WarmTransferRequest) {
    this.#deps = deps
    this.#side = side
    this.#request = request
    this.#hold = new CallerHold(side)
  }

  async dialHuman(signal: AbortSignal): Promise<void> {
    const { row } = this.#side
    const credentials = await getCarrierCredentials(this.#deps.db, row.organization_id)
    if (credentials === undefined) throw new Error('carrier credentials are not configured for this organization')
    this.credentials = credentials
    signal.throwIfAborted()
    const token = this.#deps.legs.register(this)
    if (token === undefined) throw new Error('too many transfer legs in this process')
    this.#token = token
    // Before the carrier hears of the leg: its stream or callbacks may reach another replica at once.
    await this.#deps.legs.publish(token, row.id)
    signal.throwIfAborted()
    const carrier = this.#deps.carrier
    const streamUrl = carrier.mediaStream.streamUrl(this.#deps.publicUrl, token)
    const twiml = carrier.markup.connectStream(streamUrl, { transfer_of: row.id })
    const leg = `leg=${encodeURIComponent(token)}`
    const from = this.#request.target.callerId ?? this.#side.callerId ?? (await agentNumber(this.#deps.db, row.agent_id))
    if (from === undefined) throw new Error('no caller id for the human leg: the caller has no number and the agent none assigned')
    signal.throwIfAborted()
    const call = await carrier.callsClient(credentials).createCall({
      to: this.#request.target.to,
      from,
      twiml,
      statusCallback: `${this.#deps.statusCallbackUrl}?${leg}`,
      statusCallbackEvents: ['initiated', 'ringing', 'answered', 'completed'],
      timeoutSec: Math.ceil(this.#request.timeoutMs / 1000),
      machineDetection: { callbackUrl: `${this.#deps.machineDetectionUrl}?${leg}` },
    })
    this.#callSid = call.sid
    this.#side.log.info({ transfer_call_sid: call.sid }, 'warm transfer: human leg dialled')
    // The transfer ended while the carrier was creating the call: hang it up now.
    if (signal.aborted || this.#hungUp) this.#hangupCall()
  }

  startHold(line: string | undefined, signal: AbortSignal): void {
    this.#hold.start(line, signal)
  }

  stopHold(): void {
    this.#hold.stop()
  }

  speakWhisper(text: string, signal: AbortSignal, done: (error?: unknown) => void): void {
    this.#side.speak(text, signal).then(
      (audio) => {
        const out = this.#out
        if (out === undefined || signal.aborted) return done(new Error('the human leg is gone'))
        const name = `whisper-${++this.#whisperSeq}`
        // Called as the mark's echo is read, before any frame after it (a key pressed right after the whisper).
        this.#whisperDone = () => {
          this.#whisperDone = undefined
          done()
        }
        out.send(audio)
        out.mark(name)
      },
      (err: unknown) => done(err),
    )
  }

  bridge(): void {
    const out = this.#out
    if (out === undefined) return
    out.clear()
    const human: BridgeLeg = {
      inputFormat: 'ulaw_8000',
      outputFormat: 'ulaw_8000',
      listen: (listener) => {
        this.#humanListeners.add(listener)
        return () => this.#humanListeners.delete(listener)
      },
      send: (frame) => out.send(Buffer.from(frame)),
    }
    this.#bridge = bridgeCaller(this.#side, human, this.#request.transcribe)
  }

  stopHumanLeg(): void {
    this.#hungUp = true
    this.#stopBridge()
    this.#out?.close()
    this.#hangupCall()
    this.#forget()
  }

  returnToAgent(reason: TransferFailureReason): void {
    this.#forget()
    this.#side.returnToAgent(reason)
  }

  endSession(endedBy: TransferEndedBy): void {
    this.#stopBridge()
    this.#forget()
    this.#side.endSession(endedBy)
  }

  report(fact: TransferFact): void {
    this.#side.report(fact)
  }

  // ---- the human's leg, as the carrier reports it (TransferLegHandler) -------------------------------------

  progress(status: CallStatus): void {
    const progress: HumanLegProgress | 'hangup' | undefined =
      status === 'ringing'
        ? 'ringing'
        : status === 'busy'
          ? 'busy'
          : status === 'no-answer'
            ? 'no_answer'
            : status === 'failed' || status === 'canceled'
              ? 'failed'
              : status === 'completed'
                ? 'hangup'
                : undefined
    if (progress === undefined) return
    if (progress === 'hangup') this.#legGone()
    else this.#side.input({ type: 'progress', progress })
  }

  machineVerdict(verdict: 'human' | 'machine' | 'machine_beep' | 'unknown'): void {
    if (verdict === 'machine' || verdict === 'machine_beep') this.#side.input({ type: 'progress', progress: 'machine' })
  }

  connect(out: LegMediaOut): LegMediaIn | undefined {
    if (this.#out !== undefined || this.#hungUp) return undefined
    this.#out = out
    // The media stream is the answer: the human's audio can be heard and the whisper played.
    this.#side.input({ type: 'progress', progress: 'answered' })
    return {
      media: (audio) => {
        for (const listener of this.#humanListeners) listener(audio)
      },
      dtmf: (digit) => this.#side.input({ type: 'dtmf', digits: digit }),
      mark: (name) => {
        if (name === `whisper-${this.#whisperSeq}`) this.#whisperDone?.()
      },
      ended: () => this.#legGone(),
    }
  }

  #legGone(): void {
    if (this.#legEnded) return
    this.#legEnded = true
    this.#stopBridge()
    this.#side.input({ type: 'human_hangup' })
  }

  #stopBridge(): void {
    this.#bridge?.stop()
    this.#bridge = undefined
  }

  #hangupCall(): void {
    const sid = this.#callSid
    const credentials = this.credentials
    if (sid === undefined || credentials === undefined || this.#legEnded) return
    this.#callSid = undefined
    this.#deps.carrier
      .callsClient(credentials)
      .hangup(sid)
      .catch((err: unknown) => this.#side.log.warn({ err, transfer_call_sid: sid }, 'warm transfer: could not hang up the human leg'))
  }

  /** The leg's token is no longer waited for (late callbacks are answered and ignored). */
  #forget(): void {
    if (this.#token !== undefined) this.#deps.legs.unregister(this.#token)
    this.#token = undefined
  }
}

/** The agent's first phone number (the caller id of a human leg dialled for a caller without one). */
export async function agentNumber(db: Kysely<Database>, agentId: string): Promise<string | undefined> {
  const numbers = await listPhoneNumbers(db, [agentId])
  return numbers.get(agentId)?.[0]?.phone_number
}
