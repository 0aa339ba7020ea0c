/**
 * A warm transfer of a SIP caller: the `WarmTransferIo` the driver uses when the session's call is
 * a SIP call. The human is dialled through the organization's outbound SIP trunk with the same INVITE path as
 * `initiate_outbound` (digest on 401/407, CANCEL when given up), but as a bare leg: no session, no admission slot.
 * The leg's answered call is a `SipTrunkTransport` whose "session" is this object: the human's RTP audio and RFC 4733
 * digits come in through it, the whisper and bridged audio go out through its pacer, and its BYE is the human's
 * hang-up. Early media on the leg (a 180/183 with SDP) is played to the caller in place of the ringback. Hold and bridge are the shared `CallerHold` and `bridgeCaller` (the caller's SIP transport plays them).
 */
import type { Kysely } from 'kysely'
import { onlyInput } from '../../pipeline/index.js'
import { listSipTrunks, sipTrunkPasswords } from '../store/sip-trunks.js'
import type { Database, SipTrunkRow } from '../store/schema.js'
import type { SessionPort } from '../sessions/ports/session-port.js'
import type { SipTrunkDialer, SipTrunkDialFailure, SipTrunkTransport } from '../sessions/sip/sip-trunk-dialer.js'
import type { WarmTransferRequest } from '../../core/warm-transfer-request.js'
import { HumanLegTransfer, type WarmTransferSessionSide } from './human-leg-transfer.js'
import type { HumanLegProgress } from './transfer-steps.js'

/** The whisper goes to the human's pacer 5 s at a time (mu-law 8 kHz: 8 bytes a ms), well within its queue. */
const WHISPER_PIECE_BYTES = 5000 * 8

/** What the process gives every warm transfer of a SIP caller. */
export interface SipWarmTransferDeps {
  readonly db: Kysely<Database>
  /** The running SIP endpoint; undefined while SIP is off. */
  readonly sipDialer?: (() => SipTrunkDialer | undefined) | undefined
  /** SIP_CREDENTIALS_KEY: opens the trunk's sealed outbound password. */
  readonly sipCredentialsKey?: Buffer | undefined
}

/** The progress a failed INVITE means for the transfer, by the mapping; undefined: we gave it up ourselves. */
export function sipLegFailure(failure: SipTrunkDialFailure): HumanLegProgress | undefined {
  switch (failure.kind) {
    case 'cancelled':
      return undefined
    case 'timeout':
    case 'bad_answer':
      return 'failed'
    case 'rejected':
      if (failure.status === 486 || failure.status === 600) return 'busy'
      if (failure.status === 603) return 'declined'
      if (failure.status === 408 || failure.status === 480 || failure.status === 487) return 'no_answer'
      return 'failed'
  }
}

/**
 * The trunk a transfer's leg goes out through: the one whose `outbound.from_number` is the leg's caller id, else the
 * organization's oldest trunk with an outbound URI (`listSipTrunks` is oldest first); undefined when it has none.
 */
export async function transferTrunk(db: Kysely<Database>, organizationId: string, from: string): Promise<SipTrunkRow | undefined> {
  const trunks = (await listSipTrunks(db, organizationId)).filter((t) => t.outbound_uri !== null)
  return trunks.find((t) => t.outbound_from_number === from) ?? trunks[0]
}

/** The SIP `WarmTransferIo` of one transfer. */
export class SipWarmTransfer extends HumanLegTransfer {
  readonly #deps: SipWarmTransferDeps
  #placed: { readonly callId: string; cancel(): void } | undefined
  #leg: SipTrunkTransport | undefined
  #whisperSeq = 0

  constructor(deps: SipWarmTransferDeps, side: WarmTransferSessionSide, request: WarmTransferRequest) {
    super(side, request)
    this.#deps = deps
  }

  async dialHuman(signal: AbortSignal): Promise<void> {
    const { row, log } = this.side
    const dialer = this.#deps.sipDialer?.()
    if (dialer === undefined) throw new Error('SIP is off in this process: the human cannot be dialled through a trunk')
    // A number, or a SIP URI the trunk routes (it is the outbound proxy of the INVITE).
    const to = this.request.target.to
    const from = await this.legCallerId(this.#deps.db)
    const trunk = await transferTrunk(this.#deps.db, row.organization_id, from)
    if (trunk === undefined || trunk.outbound_uri === null) throw new Error('the organization has no SIP trunk with an outbound URI')
    signal.throwIfAborted()
    let password: string | null = null
    const key = this.#deps.sipCredentialsKey
    try {
      password = key === undefined ? null : sipTrunkPasswords(trunk, key).outbound
    } catch {
      log.warn({ trunk_id: trunk.id }, 'SIP_CREDENTIALS_KEY cannot open the trunk password: dialling without credentials')
    }
    const username = trunk.outbound_username
    const placed = await dialer.dial(
      {
        uri: trunk.outbound_uri,
        from,
        to,
        credentials: username !== null && password !== null ? { username, password } : undefined,
        mediaEncryption: trunk.media_encryption,
      },
      {
        onProgress: (status) => {
          if (status === 180 || status === 183) this.side.input({ type: 'progress', progress: 'ringing' })
        },
        // An announcement or a queue's ringback before the answer: the caller hears it instead of our ringback.
        onEarlyAudio: (frame) => {
          if (!this.hungUp && this.#leg === undefined) this.earlyMedia(frame)
        },
        onAnswered: (transport) => this.#answered(transport),
        onFailed: (failure) => {
          this.legEnded = true
          const progress = sipLegFailure(failure)
          const detail = failure.kind === 'rejected' ? `${failure.status} ${failure.reason.slice(0, 100)}` : failure.kind
          log.info({ sip_failure: detail }, 'warm transfer: the human leg was not answered')
          if (progress !== undefined) this.side.input({ type: 'progress', progress })
        },
      },
    )
    if ('refused' in placed) throw new Error(`the SIP trunk cannot be dialled (${placed.refused})`)
    this.#placed = placed
    log.info({ trunk_id: trunk.id, transfer_sip_call_id: placed.callId }, 'warm transfer: human leg dialled through the SIP trunk')
    // The transfer ended while the INVITE was being placed: give it up now.
    if (signal.aborted || this.hungUp) placed.cancel()
  }

  speakWhisper(text: string, signal: AbortSignal, done: (error?: unknown) => void): void {
    this.side.speak(text, signal).then(
      (audio) => {
        const leg = this.#leg
        if (leg === undefined || signal.aborted || this.legEnded) return done(new Error('the human leg is gone'))
        const seq = ++this.#whisperSeq
        // Fed to the pacer a piece at a time (its queue is bounded, a long whisper is not): each next piece is queued
        // as the last packet of the one before leaves. Done as the whisper's last packet leaves (a key pressed right
        // after it counts).
        const feed = (at: number): void => {
          if (seq !== this.#whisperSeq || signal.aborted || this.#leg !== leg) return
          const next = at + WHISPER_PIECE_BYTES
          const last = next >= audio.length
          const queued = leg.play(audio.subarray(at, next), () => {
            if (last) done()
            else feed(next)
          })
          if (!queued) this.side.log.warn('warm transfer: the human leg could not queue the whisper')
        }
        feed(0)
      },
      (err: unknown) => done(err),
    )
  }

  protected bridgeSend(): ((frame: Uint8Array) => void) | undefined {
    const leg = this.#leg
    if (leg === undefined) return undefined
    // What is left of the whisper is dropped: the caller is heard from now on.
    leg.deliver?.({ type: 'clear_playback', turnId: 'transfer' })
    return (frame) => void leg.play(Buffer.from(frame))
  }

  stopHumanLeg(): void {
    this.hungUp = true
    this.stopBridge()
    const leg = this.#leg
    if (leg !== undefined) {
      this.#leg = undefined
      // BYE to the human (the transport tells its call); nothing if the human already hung up.
      if (!this.legEnded) leg.close('hangup')
      return
    }
    // Still ringing: CANCEL (sent once a provisional came, as RFC 3261 section 9.1 wants).
    if (!this.legEnded) this.#placed?.cancel()
  }

  #answered(transport: SipTrunkTransport): void {
    if (this.hungUp) {
      // The transfer was over before the 200 came: the dialog is ended at once.
      transport.close('hangup')
      return
    }
    this.#leg = transport
    transport.attach(this.#port())
    this.side.input({ type: 'progress', progress: 'answered' })
  }

  /** The human's leg as a session port: its audio and digits go to the transfer, its BYE is the human's hang-up. */
  #port(): SessionPort {
    const gone = async () => this.legGone()
    const input = onlyInput({
      pushAudio: (chunk) => this.heardHuman(chunk),
      dtmf: (digit) => this.side.input({ type: 'dtmf', digits: digit }),
    })
    const leg = this
    return {
      id: `transfer-leg:${this.side.row.id}`,
      get isEnded() {
        return leg.legEnded || leg.hungUp
      },
      input,
      end: gone,
      transportClosed: gone,
    }
  }
}
