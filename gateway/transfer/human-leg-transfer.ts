/**
 * What a warm transfer does the same whichever way its human is dialled (the carrier's Calls API, a SIP trunk): the
 * caller's hold line and hold audio, the bridge between the caller and the human's audio, the human's hang-up, and
 * handing the caller back to the agent or ending the session. A channel's transfer only dials the human, plays the
 * whisper, readies its leg for the bridge and hangs it up (carrier-warm-transfer.ts, sip-warm-transfer.ts).
 */
import type { Kysely } from 'kysely'
import type { Log } from '../../core/log.js'
import type { WarmTransferRequest } from '../../core/warm-transfer-request.js'
import type { InputAudioFormat, OutputAudioFormat } from '../../pipeline/index.js'
import { listPhoneNumbers } from '../store/phone-numbers.js'
import type { Database, SessionRow } from '../store/schema.js'
import type { BridgeLeg } from './bridge-leg.js'
import type { BridgeTranscriberDeps } from './bridge-transcriber.js'
import { type CallerBridge, bridgeCaller } from './caller-bridge.js'
import { CallerHold } from './caller-hold.js'
import type { HoldMusic } from './hold-music.js'
import type { TransferEndedBy, TransferFact, TransferFailureReason, TransferInput } from './transfer-steps.js'
import type { WarmTransferIo } from './warm-transfer-driver.js'

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

/** The part of a warm transfer every channel shares; a channel implements how its human's leg is dialled and heard. */
export abstract class HumanLegTransfer implements WarmTransferIo {
  protected readonly side: WarmTransferSessionSide
  protected readonly request: WarmTransferRequest
  readonly #hold: CallerHold
  readonly #humanListeners = new Set<(audio: Uint8Array) => void>()
  #bridge: CallerBridge | undefined
  /** We hung the leg up (or gave the attempt up): an answer or a stream that crosses it is ended at once. */
  protected hungUp = false
  /** The leg ended by itself (the human hung up, or the attempt failed). */
  protected legEnded = false

  constructor(side: WarmTransferSessionSide, request: WarmTransferRequest) {
    this.side = side
    this.request = request
    this.#hold = new CallerHold(side)
  }

  abstract dialHuman(signal: AbortSignal): Promise<void>
  abstract speakWhisper(text: string, signal: AbortSignal, done: (error?: unknown) => void): void
  abstract stopHumanLeg(): void

  /** Readies the human's leg for the bridge; how a frame (mu-law 8 kHz) reaches the human, or undefined without a leg. */
  protected abstract bridgeSend(): ((frame: Uint8Array) => void) | undefined

  /** Lets go of what the leg holds in the process once the transfer is over for it (nothing by default). */
  protected release(): void {}

  startHold(line: string | undefined, signal: AbortSignal): void {
    this.#hold.start(line, signal)
  }

  stopHold(): void {
    this.#hold.stop()
  }

  /** The human leg's early media (an announcement, a queue's ringback) for the caller, in place of our ringback. */
  protected earlyMedia(frame: Buffer): void {
    this.#hold.earlyMedia(frame)
  }

  bridge(): void {
    const send = this.bridgeSend()
    if (send === undefined) return
    const human: BridgeLeg = {
      inputFormat: 'ulaw_8000',
      outputFormat: 'ulaw_8000',
      listen: (listener) => {
        this.#humanListeners.add(listener)
        return () => this.#humanListeners.delete(listener)
      },
      send,
    }
    this.#bridge = bridgeCaller(this.side, human, this.request.transcribe)
  }

  returnToAgent(reason: TransferFailureReason): void {
    this.release()
    this.side.returnToAgent(reason)
  }

  endSession(endedBy: TransferEndedBy): void {
    this.stopBridge()
    this.release()
    this.side.endSession(endedBy)
  }

  report(fact: TransferFact): void {
    this.side.report(fact)
  }

  /** The human's audio, to whoever listens (the bridge). */
  protected heardHuman(audio: Uint8Array): void {
    for (const listener of this.#humanListeners) listener(audio)
  }

  /** The human's leg ended by itself: the bridge stops and the driver hears the hang-up. */
  protected legGone(): void {
    if (this.legEnded) return
    this.legEnded = true
    this.stopBridge()
    this.side.input({ type: 'human_hangup' })
  }

  protected stopBridge(): void {
    this.#bridge?.stop()
    this.#bridge = undefined
  }

  /** The human leg's caller id: the command's, else the caller's number, else the agent's first phone number. */
  protected async legCallerId(db: Kysely<Database>): Promise<string> {
    const from = this.request.target.callerId ?? this.side.callerId ?? (await agentNumber(db, this.side.row.agent_id))
    if (from === undefined) throw new Error('no caller id for the human leg: the caller has no number and the agent none assigned')
    return from
  }
}

/** The agent's first phone number (the caller id of a human leg dialled for a caller without one). */
export async function agentNumber(db: Kysely<Database>, agentId: string): Promise<string | undefined> {
  const numbers = await listPhoneNumbers(db, [agentId])
  return numbers.get(agentId)?.[0]?.phone_number
}
