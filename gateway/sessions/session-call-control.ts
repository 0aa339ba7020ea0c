/**
 * A session's call control (additions to the SPEC): `response.transfer` (check the target, ask the
 * carrier, end `transferred`; `mode: "warm"` goes to the session's warm transfer slot), failures reported to the agent in the error registry's shape, and answering
 * machine detection (the verdict told once, the gateway's own beep detector on the callee's audio).
 */
import type { Kysely } from 'kysely'
import type { EndReason } from '../../core/end-reason.js'
import { isVoxgateError, voxError, type VoxgateError } from '../../core/errors.js'
import type { Log } from '../../core/log.js'
import type { MachineVerdict } from '../../core/machine-verdict.js'
import { parseTransferTarget } from '../../core/transfer-target.js'
import { BeepDetector, decodeMulaw, type PipelineEvent, type PipelineInput, tapInput } from '../../pipeline/index.js'
import { storeAnsweredBy } from '../store/carrier-calls.js'
import { addToDoNotCall } from '../store/do-not-call.js'
import { normalisePhoneNumber } from '../../core/phone.js'
import type { Database, SessionRow } from '../store/schema.js'
import type { CallTransferer } from './carrier/call-transfer.js'
import { parseWarmTransferRequest } from '../../core/warm-transfer-request.js'
import type { WarmTransferSlot } from './ports/warm-transfer-port.js'
import { peerTakesRefer, sipBridgeTransfer } from './sip/sip-bridge-transfer.js'

/** What the caller hears when a transfer fails (the call goes on with the agent). */
export const TRANSFER_APOLOGY = 'I am sorry, I could not transfer your call.'

/** The session as its call control sees it. */
export interface CallControlHost {
  readonly row: SessionRow
  readonly channel: 'browser' | 'carrier' | 'sip'
  /** SIP: the methods the peer's `Allow` listed (a peer without REFER is transferred by bridging). */
  readonly peerAllows?: readonly string[] | undefined
  readonly signal: AbortSignal
  isEnded(): boolean
  /** The pipeline's input as it is now (nothing before the pipeline runs and after it ended). */
  input(): PipelineInput
  /** Tells the transport (an error message to a browser). */
  deliver(event: PipelineEvent): void
  end(reason: EndReason): Promise<void>
}

/** Call control of one session. */
export class SessionCallControl {
  readonly #host: CallControlHost
  readonly #db: Kysely<Database>
  readonly #log: Log
  readonly #transferer: CallTransferer | undefined
  readonly #warm: WarmTransferSlot | undefined
  /** A transfer in flight: resolves true once the carrier took the call. */
  #transferring: Promise<boolean> | undefined
  #transferredTo: string | undefined
  /** The machine detection verdict the agent was told, if any. */
  #verdict: MachineVerdict | undefined
  /** The gateway's own beep detector, while a call with machine detection has no final verdict. */
  #beeps: BeepDetector | undefined
  #beepPcm = new Int16Array(0)

  constructor(
    host: CallControlHost,
    deps: { db: Kysely<Database>; log: Log; callTransfer?: CallTransferer | undefined; warm?: WarmTransferSlot | undefined },
    mulawInput: boolean,
  ) {
    this.#host = host
    this.#db = deps.db
    this.#log = deps.log.child({ session_id: host.row.id })
    this.#transferer = deps.callTransfer
    this.#warm = deps.warm
    if (host.row.machine_detection && mulawInput) this.#beeps = new BeepDetector()
  }

  /** Where a successful transfer sent the call (stored with the session's end). */
  get transferredTo(): string | undefined {
    return this.#transferredTo
  }

  /**
   * The end to use when `reason` arrives: while a transfer is in flight, the carrier ends the media stream (and
   * may report the call, to any replica) as it takes the call, so such an end waits for the carrier's answer and
   * becomes `transferred` if it took the call. Undefined: end now with `reason`.
   */
  deferredEnd(reason: EndReason): Promise<EndReason> | undefined {
    const transfer = this.#transferring
    if (transfer === undefined || (reason !== 'caller_hangup' && reason !== 'client_disconnected')) return undefined
    return transfer.then((ok) => (ok ? 'transferred' : reason))
  }

  /** Handles the pipeline's call-control events; the others are not its business. */
  onPipelineEvent(e: PipelineEvent): void {
    if (e.type === 'transfer') void this.#transfer(e)
    else if (e.type === 'dnc') void this.#doNotCall()
    else if (e.type === 'call_control.rejected') {
      this.#failed({ dtmf_failed: { digits: e.digits, ...errorBody(voxError(e.code, e.message)) } }, undefined)
    }
  }

  /**
   * `response.dnc`: the person on the call (the callee of an outbound call, the caller of an inbound one) goes on
   * the organization's do-not-call list; the call itself goes on. A browser session has no number to list.
   */
  async #doNotCall(): Promise<void> {
    const row = this.#host.row
    const number = row.direction === 'outbound-api' ? row.to_phone_number : row.from_phone_number
    const e164 = number === null ? undefined : normalisePhoneNumber(number)?.e164
    if (e164 === undefined) return this.#log.warn('response.dnc on a session without a phone number: ignored')
    try {
      await addToDoNotCall(this.#db, row.organization_id, [e164], 'call')
      this.#log.info('response.dnc: the number is on the do-not-call list')
    } catch (err) {
      this.#log.error({ err }, 'response.dnc: could not store the number')
    }
  }

  /**
   * `response.transfer`: checks the target, asks the channel's transferer (the carrier, a SIP call's REFER) to
   * connect the caller to it and ends the session
   * `transferred`. A failure is reported to the agent as a `data` event `{ transfer_failed: { to, error, code,
   * details? } }` (the error registry's body) and, on a phone call, apologised for; the call goes on.
   */
  async #transfer(e: Extract<PipelineEvent, { type: 'transfer' }>): Promise<void> {
    const host = this.#host
    if (this.#transferring !== undefined || host.isEnded() || this.#warm?.active === true) return
    const failed = (err: VoxgateError, apology: string | undefined) => {
      this.#log.warn({ code: err.code }, `transfer failed: ${err.message}`)
      this.#failed({ transfer_failed: { to: e.to.slice(0, 256), ...errorBody(err) } }, apology)
    }
    const warm = e.warm
    const input = { to: e.to, callerId: e.callerId, headers: e.headers }
    const parsed = warm === undefined ? parseTransferTarget(input) : parseWarmTransferRequest({ ...input, ...warm })
    if (!parsed.ok) {
      const first = parsed.problems[0] ?? 'invalid target'
      const err = voxError('invalid_transfer_target', `invalid transfer target: ${first}`, { details: parsed.problems })
      return failed(err, TRANSFER_APOLOGY)
    }
    const transferer = this.#transferer
    if (warm !== undefined && 'request' in parsed && this.#warm !== undefined) {
      this.#warm.start(parsed.request)
      return
    }
    // A SIP peer that cannot take a REFER: the gateway dials the target and bridges (sip-bridge-transfer.ts).
    if (
      host.channel === 'sip' &&
      warm === undefined &&
      'target' in parsed &&
      this.#warm !== undefined &&
      !peerTakesRefer(host.peerAllows)
    ) {
      sipBridgeTransfer(this.#warm, parsed.target)
      return
    }
    if (transferer === undefined || warm !== undefined) {
      const err = voxError('transfer_not_supported', `only phone calls can be transferred (this is a ${host.channel} session)`)
      host.deliver({ type: 'notice', code: err.code, message: err.message })
      return failed(err, undefined)
    }
    if (!('target' in parsed)) return
    const target = parsed.target
    this.#transferring = transferer.transfer(host.row, target, host.signal).then(
      () => {
        this.#transferredTo = target.to
        return true
      },
      (err: unknown) => {
        if (!host.signal.aborted) failed(isVoxgateError(err) ? err : voxError('transfer_failed'), TRANSFER_APOLOGY)
        return false
      },
    )
    const ok = await this.#transferring
    this.#transferring = undefined
    if (ok) {
      this.#log.info({ transferred_to: target.to }, 'call transferred')
      void host.end('transferred')
    }
  }

  #failed(data: unknown, apology: string | undefined): void {
    if (this.#host.isEnded()) return
    this.#host.input().callControlFailed?.({ data, apology })
  }

  /**
   * What answered this outbound call: the agent is asked like a turn. The first verdict stands, except that
   * `machine` or `unknown` moves on to `machine_beep` when the beep is heard (then the agent's message can
   * start); a final verdict stops the beep detector.
   */
  machineVerdict(verdict: MachineVerdict): void {
    if (this.#host.isEnded() || !this.#host.row.machine_detection) return
    const current = this.#verdict
    if (current !== undefined && !(verdict === 'machine_beep' && (current === 'machine' || current === 'unknown'))) return
    this.#verdict = verdict
    if (verdict === 'human' || verdict === 'machine_beep') this.#beeps = undefined
    this.#log.info({ verdict }, 'machine detection verdict delivered')
    this.#host.input().machineVerdict?.(verdict)
  }

  /** A verdict stored before the pipeline ran is told once it does. */
  pipelineStarted(): void {
    const known = this.#host.row.answered_by
    if (known === 'human' || known === 'machine' || known === 'machine_beep' || known === 'unknown') this.machineVerdict(known)
  }

  /** `input`, with caller audio also going through the beep detector (calls with machine detection, until a verdict). */
  tap(input: PipelineInput): PipelineInput {
    if (this.#beeps === undefined) return input
    return tapInput(input, {
      pushAudio: (chunk, mediaTimestampMs) => {
        input.pushAudio(chunk, mediaTimestampMs)
        const detector = this.#beeps
        if (detector === undefined) return
        if (this.#beepPcm.length < chunk.length) this.#beepPcm = new Int16Array(chunk.length)
        const beep = detector.push(decodeMulaw(chunk, this.#beepPcm).subarray(0, chunk.length))
        if (beep !== undefined) void this.#heardBeep(beep.endMs)
      },
    })
  }

  async #heardBeep(endMs: number): Promise<void> {
    this.#beeps = undefined
    this.#log.info({ beep_end_ms: endMs }, 'answering machine beep heard')
    try {
      // Stored first, so a carrier verdict arriving meanwhile cannot replace it (and the agent is told once).
      if ((await storeAnsweredBy(this.#db, this.#host.row.id, 'machine_beep')) !== undefined) this.machineVerdict('machine_beep')
    } catch (e) {
      this.#log.warn({ err: e }, 'could not store the machine detection verdict')
      this.machineVerdict('machine_beep')
    }
  }
}

/** The error registry's body `{ error, code, details? }` of a registered error. */
function errorBody(err: VoxgateError): { error: string; code: string; details?: string[] } {
  return { error: err.message, code: err.code, ...(err.details !== undefined && { details: err.details }) }
}
