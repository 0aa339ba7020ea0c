/**
 * A warm transfer of a phone caller on the carrier path: the `WarmTransferIo` the driver uses. The human
 * is dialled through the organization's Calls API with `<Connect><Stream>` markup whose URL carries a `tl_` token
 * (transfer-legs.ts), and callbacks with `?leg=<token>`; the caller hears the hold line and hold audio meanwhile;
 * the whisper goes to the human's stream only; the bridge relays both streams' frames as they arrive.
 */
import type { Kysely } from 'kysely'
import type { CallStatus } from '../../core/call-status.js'
import type { WarmTransferRequest } from '../../core/warm-transfer-request.js'
import { getCarrierCredentials } from '../store/organizations.js'
import type { Database } from '../store/schema.js'
import type { CallCarrier } from '../sessions/carrier/call-carrier.js'
import type { LegMediaIn, LegMediaOut, TransferLegHandler, TransferLegs } from './transfer-legs.js'
import type { HumanLegProgress } from './transfer-steps.js'
import { HumanLegTransfer, type WarmTransferSessionSide } from './human-leg-transfer.js'

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

/** The carrier `WarmTransferIo` of one transfer: the human's leg is a call of the Calls API and its media stream. */
export class CarrierWarmTransfer extends HumanLegTransfer implements TransferLegHandler {
  readonly #deps: CarrierWarmTransferDeps
  credentials: TransferLegHandler['credentials']
  #token: string | undefined
  #callSid: string | undefined
  #out: LegMediaOut | undefined
  #whisperDone: (() => void) | undefined
  #whisperSeq = 0

  constructor(deps: CarrierWarmTransferDeps, side: WarmTransferSessionSide, request: WarmTransferRequest) {
    super(side, request)
    this.#deps = deps
  }

  async dialHuman(signal: AbortSignal): Promise<void> {
    const { row } = this.side
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
    const from = await this.legCallerId(this.#deps.db)
    signal.throwIfAborted()
    const call = await carrier.callsClient(credentials).createCall({
      to: this.request.target.to,
      from,
      twiml,
      statusCallback: `${this.#deps.statusCallbackUrl}?${leg}`,
      statusCallbackEvents: ['initiated', 'ringing', 'answered', 'completed'],
      timeoutSec: Math.ceil(this.request.timeoutMs / 1000),
      machineDetection: { callbackUrl: `${this.#deps.machineDetectionUrl}?${leg}` },
    })
    this.#callSid = call.sid
    this.side.log.info({ transfer_call_sid: call.sid }, 'warm transfer: human leg dialled')
    // The transfer ended while the carrier was creating the call: hang it up now.
    if (signal.aborted || this.hungUp) this.#hangupCall()
  }

  speakWhisper(text: string, signal: AbortSignal, done: (error?: unknown) => void): void {
    this.side.speak(text, signal).then(
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

  protected bridgeSend(): ((frame: Uint8Array) => void) | undefined {
    const out = this.#out
    if (out === undefined) return undefined
    out.clear()
    return (frame) => out.send(Buffer.from(frame))
  }

  stopHumanLeg(): void {
    this.hungUp = true
    this.stopBridge()
    this.#out?.close()
    this.#hangupCall()
    this.release()
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
    if (progress === 'hangup') this.legGone()
    else this.side.input({ type: 'progress', progress })
  }

  machineVerdict(verdict: 'human' | 'machine' | 'machine_beep' | 'unknown'): void {
    if (verdict === 'machine' || verdict === 'machine_beep') this.side.input({ type: 'progress', progress: 'machine' })
  }

  connect(out: LegMediaOut): LegMediaIn | undefined {
    if (this.#out !== undefined || this.hungUp) return undefined
    this.#out = out
    // The media stream is the answer: the human's audio can be heard and the whisper played.
    this.side.input({ type: 'progress', progress: 'answered' })
    return {
      media: (audio) => this.heardHuman(audio),
      dtmf: (digit) => this.side.input({ type: 'dtmf', digits: digit }),
      mark: (name) => {
        if (name === `whisper-${this.#whisperSeq}`) this.#whisperDone?.()
      },
      ended: () => this.legGone(),
    }
  }

  #hangupCall(): void {
    const sid = this.#callSid
    const credentials = this.credentials
    if (sid === undefined || credentials === undefined || this.legEnded) return
    this.#callSid = undefined
    this.#deps.carrier
      .callsClient(credentials)
      .hangup(sid)
      .catch((err: unknown) => this.side.log.warn({ err, transfer_call_sid: sid }, 'warm transfer: could not hang up the human leg'))
  }

  /** The leg's token is no longer waited for (late callbacks are answered and ignored). */
  protected override release(): void {
    if (this.#token !== undefined) this.#deps.legs.unregister(this.#token)
    this.#token = undefined
  }
}
