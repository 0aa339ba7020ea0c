/**
 * The session side of one SIP call, a `SessionTransport` of kind `sip` (the sessions layer takes it
 * structurally: `transports/sip` does not import it). Like the carrier's media stream the pipeline speaks
 * mu-law 8 kHz; a PCMA call is transcoded both ways through the pipeline's G.711 codecs. Assistant audio is cut
 * into 20 ms frames for the pacer; the chunk counts as written when its first packet leaves and as heard
 * (`markPlayed`, the carrier's mark echo) when its last one does, so barge-in and the farewell before a hang-up
 * work as on a carrier call. A `clear` drops the queued frames, and their chunks are never reported heard; a pause
 * holds them in the pacer, to the frame, until the resume.
 */
import type { EndReason } from '../../../core/end-reason.js'
import { voxError } from '../../../core/errors.js'
import type { TransferTarget } from '../../../core/transfer-target.js'
import {
  DTMF_PAUSE_MS,
  decodeAlaw,
  decodeMulaw,
  encodeAlaw,
  encodeMulaw,
  type PipelineEvent,
  type PipelineInput,
} from '../../../pipeline/index.js'
import { END_REPEATS } from '../media/dtmf-sender.js'
import { FRAME_BYTES, FRAME_MS, type RtpMedia } from '../media/rtp-media.js'

/**
 * The session a SIP call drives (structurally the sessions layer's `SessionPort`): its pipeline input, and the
 * two ways it ends.
 */
export interface SipSessionPort {
  readonly id: string
  readonly isEnded: boolean
  readonly input?: PipelineInput | undefined
  end(reason: EndReason): Promise<void>
  transportClosed(reason?: EndReason): Promise<void>
  /** Restarts the user-silence timeout (a held caller is not a silent one). */
  noteUserActivity?(): void
  /** The peer put the call on hold or took it off: the duration limit does not count it, the recording lists it. */
  held?(kind: 'sip_hold', on: boolean): void
}

/** While the caller is held, how often the user-silence timeout is pushed back (it counts in minutes). */
export const HOLD_ACTIVITY_INTERVAL_MS = 30_000

/** What the call does when the session ends by itself (agent hang-up, limits, shutdown): it sends BYE. */
export interface SipCallTransportEvents {
  readonly onSessionEnded: (reason: EndReason) => void
  /**
   * Transfers the caller by REFER (the call's dialog); unset when the call cannot (the peer did not list REFER in
   * its Allow header, an outbound call).
   */
  readonly refer?: ((target: TransferTarget, signal: AbortSignal) => Promise<void>) | undefined
}

/** How the sessions layer asks a SIP call to transfer itself (structurally its `CallReferral`). */
export interface SipReferral {
  readonly supported: boolean
  refer(target: TransferTarget, signal: AbortSignal): Promise<void>
}

/** `SessionTransport` over one SIP dialog's RTP stream. */
export class SipCallTransport {
  readonly kind = 'sip' as const
  readonly audio = { input: 'ulaw_8000', output: 'ulaw_8000' } as const
  readonly #media: RtpMedia
  #alaw: boolean
  readonly #events: SipCallTransportEvents
  #session: SipSessionPort | undefined
  #closed = false
  #hold: NodeJS.Timeout | undefined
  /** Assistant audio frames dropped because the pacer's queue was full. */
  droppedFrames = 0
  /** Blind transfer by REFER, when the peer accepts it. */
  readonly referral: SipReferral
  /**
   * The methods the peer's `Allow` header listed (its INVITE, or its 200 on an outbound call), upper-cased;
   * undefined when it sent none (RFC 3261 section 20.5: then nothing is known of what it takes).
   */
  readonly peerAllows: readonly string[] | undefined

  constructor(media: RtpMedia, codec: 'PCMU' | 'PCMA', events: SipCallTransportEvents, peerAllows?: readonly string[] | undefined) {
    this.#media = media
    this.#alaw = codec === 'PCMA'
    this.#events = events
    const refer = events.refer
    this.referral = {
      supported: refer !== undefined,
      refer: (target, signal) =>
        refer === undefined
          ? Promise.reject(voxError('transfer_not_supported', 'the SIP peer does not accept REFER'))
          : refer(target, signal),
    }
    this.peerAllows = peerAllows
  }

  /** Binds the session; caller audio and digits flow to it from now on. */
  attach(session: SipSessionPort): void {
    this.#session = session
  }

  /** A re-INVITE changed the codec: caller audio and ours are converted for the new one from now on. */
  setCodec(codec: 'PCMU' | 'PCMA'): void {
    this.#alaw = codec === 'PCMA'
  }

  /** True while the peer holds the call. */
  get held(): boolean {
    return this.#hold !== undefined
  }

  /**
   * The peer put the call on hold or took it off. While held, what it sends (music on hold) reaches the
   * pipeline as silence, so it is neither transcribed nor taken for a turn, and the user-silence timeout is
   * pushed back; it runs again from the moment the call is taken off hold.
   */
  setHeld(held: boolean): void {
    if (held === this.held || this.#closed) return
    this.#session?.noteUserActivity?.()
    this.#session?.held?.('sip_hold', held)
    if (!held) {
      clearInterval(this.#hold)
      this.#hold = undefined
      return
    }
    this.#hold = setInterval(() => this.#session?.noteUserActivity?.(), HOLD_ACTIVITY_INTERVAL_MS)
    this.#hold.unref()
  }

  /** Caller audio from the jitter buffer, in the negotiated codec. */
  callerAudio(frame: Buffer, atMs: number): void {
    const audio = this.held ? Buffer.alloc(frame.length, MULAW_SILENCE) : this.#alaw ? toMulaw(frame) : frame
    this.#session?.input?.pushAudio(audio, atMs)
  }

  /** A digit from RFC 4733 events: the same path as carrier DTMF. */
  callerDigit(digit: string): void {
    this.#session?.input?.dtmf(digit)
  }

  deliver(event: PipelineEvent): void {
    switch (event.type) {
      case 'audio':
        if (event.dtmf !== undefined && this.#media.sendsTelephoneEvents) this.#playDigits(event.chunkId, event.dtmf)
        else this.#play(event.chunkId, event.audio)
        return
      case 'clear_playback':
        this.#media.clear()
        return
      case 'pause_playback':
        // The pacer holds the queued frames (silence goes out): their chunks are reported heard only once played.
        this.#media.pause()
        return
      case 'resume_playback':
        this.#media.resume()
        return
      case 'hangup':
        // Sent after the farewell's last packet left: ending the session sends the BYE (through `close`).
        void this.#session?.end(event.reason === 'agent_hangup' ? 'hangup' : 'error')
        return
      default:
        return
    }
  }

  /**
   * Raw mu-law 8 kHz to the peer outside the pipeline's turns (a warm transfer's hold audio, whisper and bridged
   * audio), cut into 20 ms frames for the pacer; `onPlayed` is called when the last frame left. False when the
   * pacer's queue was full (the rest is dropped, and `onPlayed` still called, so nobody waits forever).
   */
  play(audio: Buffer, onPlayed?: () => void): boolean {
    const frames = Math.ceil(audio.length / FRAME_BYTES)
    for (let i = 0; i < frames; i++) {
      let frame = audio.subarray(i * FRAME_BYTES, (i + 1) * FRAME_BYTES)
      if (frame.length < FRAME_BYTES) frame = Buffer.concat([frame, Buffer.alloc(FRAME_BYTES - frame.length, MULAW_SILENCE)])
      const wire = this.#alaw ? toAlaw(frame) : Buffer.from(frame)
      if (!this.#media.enqueue(wire, i === frames - 1 ? onPlayed : undefined)) {
        this.droppedFrames++
        onPlayed?.()
        return false
      }
    }
    if (frames === 0) onPlayed?.()
    return true
  }

  /** The session ended for a reason other than the peer's BYE: tell the call (it sends BYE). */
  close(reason: EndReason): void {
    if (this.#closed) return
    this.#closed = true
    clearInterval(this.#hold)
    this.#events.onSessionEnded(reason)
  }

  /** The peer hung up (BYE) or the call failed on the wire: the session ends without a BYE from us. */
  peerEnded(reason: EndReason): void {
    if (this.#closed) return
    this.#closed = true
    clearInterval(this.#hold)
    void this.#session?.transportClosed(reason)
  }

  /**
   * `response.dtmf` as RFC 4733 events (the peer negotiated telephone-event): each digit is one event of `toneMs`
   * (its three end reports take two more slots), then silence for the rest of `gapMs`; a `w` is a pause of silence.
   * The chunk is written with its first packet and heard with its last, as its in-band tones would be.
   */
  #playDigits(chunkId: number, dtmf: { digits: string; toneMs: number; gapMs: number }): void {
    const silence = Buffer.alloc(FRAME_BYTES, this.#alaw ? ALAW_SILENCE : MULAW_SILENCE)
    // A digit, or undefined for one frame of silence.
    const steps: (string | undefined)[] = []
    const pause = (ms: number) => {
      for (let i = 0; i < ms / FRAME_MS; i++) steps.push(undefined)
    }
    for (const d of dtmf.digits) {
      if (d === 'w') {
        pause(DTMF_PAUSE_MS)
        continue
      }
      steps.push(d)
      pause(Math.round(dtmf.gapMs / FRAME_MS) * FRAME_MS - (END_REPEATS - 1) * FRAME_MS)
    }
    let queued = true
    for (let i = 0; i < steps.length && queued; i++) {
      const first = i === 0
      const last = i === steps.length - 1
      const sent = () => {
        if (first) this.#session?.input?.audioWritten(chunkId)
        if (last) this.#session?.input?.markPlayed(chunkId)
      }
      const digit = steps[i]
      // Each silent frame is its own buffer: the media knows a frame by its identity.
      queued =
        digit === undefined
          ? this.#media.enqueue(Buffer.from(silence), first || last ? sent : undefined)
          : this.#media.enqueueDigit(digit, dtmf.toneMs, sent)
    }
    if (!queued) {
      this.droppedFrames++
      this.#session?.input?.markPlayed(chunkId)
    }
  }

  #play(chunkId: number, audio: Buffer): void {
    const frames = Math.ceil(audio.length / FRAME_BYTES)
    let queued = true
    for (let i = 0; i < frames && queued; i++) {
      let frame = audio.subarray(i * FRAME_BYTES, (i + 1) * FRAME_BYTES)
      if (frame.length < FRAME_BYTES) frame = Buffer.concat([frame, Buffer.alloc(FRAME_BYTES - frame.length, 0xff)])
      const wire = this.#alaw ? toAlaw(frame) : Buffer.from(frame)
      const first = i === 0
      const last = i === frames - 1
      queued = this.#media.enqueue(
        wire,
        first || last
          ? () => {
              if (first) this.#session?.input?.audioWritten(chunkId)
              if (last) this.#session?.input?.markPlayed(chunkId)
            }
          : undefined,
      )
    }
    if (!queued) {
      // Never grow memory without bound; the chunk still counts as heard so the pipeline is not left waiting.
      this.droppedFrames++
      this.#session?.input?.markPlayed(chunkId)
    }
  }
}

/** Mu-law and A-law silence. */
const MULAW_SILENCE = 0xff
const ALAW_SILENCE = 0xd5

function toMulaw(alaw: Buffer): Buffer {
  return Buffer.from(encodeMulaw(decodeAlaw(alaw)))
}

function toAlaw(mulaw: Buffer): Buffer {
  return Buffer.from(encodeAlaw(decodeMulaw(mulaw)))
}
