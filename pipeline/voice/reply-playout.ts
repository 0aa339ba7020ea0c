import type { OutputAudioFormat } from '../audio/audio-format.js'
import { encodeMulaw } from '../audio/g711-mulaw.js'
import { int16ToBuffer } from '../audio/pcm16.js'
import { dtmfDuration, dtmfTones, MAX_DTMF_DIGITS, parseDtmfDigits } from '../tones/dtmf-tones.js'
import type { AssistantTurn } from './assistant-turn.js'
import type { PipelineEvent, PipelineHooks } from './pipeline-io.js'

const BYTES_PER_MS: Record<OutputAudioFormat, number> = { ulaw_8000: 8, pcm_16000: 32 }
/** After a reply's audio should have been heard, how long to wait for the transport's reports before moving on. */
const PLAYBACK_REPORT_GRACE_MS = 3_000

/**
 * A `replay_finished` without a turn id this soon after the turn's first audio was written may be about an older
 * turn (its player stopped before this turn's audio reached it): a round trip, with room for a slow network.
 */
const ANONYMOUS_REPORT_WINDOW_MS = 1_000

/** What playout needs from its pipeline. */
export interface ReplyPlayoutDeps {
  /** The transport's output format; undefined for text-only transports (nothing is played). */
  output: OutputAudioFormat | undefined
  emit(e: PipelineEvent): void
  hooks: PipelineHooks
  now(): number
}

/**
 * The last step of a reply: its speech and keypad tones go to the transport as audio chunks with increasing ids,
 * and the transport's reports (marks, writes, replay finished) say what the caller has heard of them.
 */
export class ReplyPlayout {
  readonly #d: ReplyPlayoutDeps
  #chunkSeq = 0

  constructor(d: ReplyPlayoutDeps) {
    this.#d = d
  }

  /** Speech the TTS produced for turn `a`. */
  speech(a: AssistantTurn, audio: Buffer): void {
    if (this.#d.output === undefined) return
    a.timings.firstAudioAt ??= this.#d.now()
    this.#d.hooks.usage({ ttsSeconds: audio.length / BYTES_PER_MS[this.#d.output] / 1000 })
    this.#send(a, audio)
  }

  /** Checks `response.dtmf` digits and queues their tones behind the reply's speech; refusals go to the session. */
  queueDtmf(a: AssistantTurn, e: { digits: string; toneMs?: number | undefined; gapMs?: number | undefined }): void {
    const reject = (code: 'invalid_dtmf_digits' | 'dtmf_not_supported', message: string) =>
      this.#d.emit({ type: 'call_control.rejected', turnId: a.turnId, action: 'dtmf', code, message, digits: e.digits.slice(0, 80) })
    if (this.#d.output === undefined) return reject('dtmf_not_supported', 'this session has no audio: keypad tones cannot be played')
    const parsed = parseDtmfDigits(e.digits)
    if (!parsed.ok) return reject('invalid_dtmf_digits', `response.dtmf: ${parsed.problem}`)
    const queued = a.dtmf.reduce((n, d) => n + d.digits.length, 0)
    if (queued + parsed.digits.length > MAX_DTMF_DIGITS) {
      return reject('invalid_dtmf_digits', `response.dtmf: at most ${MAX_DTMF_DIGITS} digits per reply`)
    }
    a.dtmf.push({ digits: parsed.digits, toneMs: e.toneMs, gapMs: e.gapMs })
  }

  /**
   * The reply is complete: its queued tones follow the speech, then true once the caller has heard it all. Until
   * then false, and `recheck` runs when the audio should have played out (a transport that never reports cannot
   * stall the call).
   */
  heard(a: AssistantTurn, recheck: () => void): boolean {
    if (a.dtmf.length > 0) this.#playDtmf(a)
    const now = this.#d.now()
    if (a.playback.isDone(now)) return true
    clearTimeout(a.safetyTimer)
    const wait = Math.max(50, a.playback.totalMs - a.playback.heardMs(now)) + PLAYBACK_REPORT_GRACE_MS
    a.safetyTimer = setTimeout(() => {
      a.playback.allPlayed()
      recheck()
    }, wait)
    a.safetyTimer.unref()
    return false
  }

  /** Carrier mark: chunks up to `chunkId` were heard; true when that is news for turn `a`. */
  markPlayed(a: AssistantTurn, chunkId: number): boolean {
    if (!a.playback.markPlayed(chunkId)) return false
    a.timings.firstHeardAt ??= this.#d.now()
    return true
  }

  /** The transport wrote chunk `chunkId` to its socket: the turn's first frame out, when the chunk is its. */
  audioWritten(a: AssistantTurn, chunkId: number): void {
    if (a.playback.has(chunkId)) a.timings.firstFrameOutAt ??= this.#d.now()
  }

  /**
   * Browser replay_finished for turn `a`: everything sent for it was played. A report without a turn id (what the
   * published browser SDK sends, whenever its player runs dry or is stopped) may be about an older turn, sent
   * before the client had any of this one's audio; such a report arrives at most a round trip after this turn's
   * first audio was written. So within ANONYMOUS_REPORT_WINDOW_MS of that write it covers no more of this turn
   * than real time allows, none at all before that write, and it covers everything sent after. False when the
   * report says nothing of this turn.
   */
  replayFinished(a: AssistantTurn, turnId: string | undefined): boolean {
    if (turnId !== undefined) {
      a.playback.allPlayed()
      return true
    }
    const firstOut = a.timings.firstFrameOutAt
    if (firstOut === undefined) return false
    const elapsed = this.#d.now() - firstOut
    if (elapsed >= ANONYMOUS_REPORT_WINDOW_MS) a.playback.allPlayed()
    else a.playback.playedAtLeast(elapsed)
    return true
  }

  /** Sends the reply's queued keypad tones as audio chunks, after all of its speech. */
  #playDtmf(a: AssistantTurn): void {
    const output = this.#d.output
    if (output === undefined) return
    for (const d of a.dtmf.splice(0)) {
      const sampleRate = output === 'ulaw_8000' ? 8000 : 16000
      const pcm = dtmfTones(d.digits, { sampleRate, toneMs: d.toneMs, gapMs: d.gapMs })
      const audio = output === 'ulaw_8000' ? Buffer.from(encodeMulaw(pcm)) : int16ToBuffer(pcm)
      this.#send(a, audio, { digits: d.digits, toneMs: dtmfDuration(d.toneMs), gapMs: dtmfDuration(d.gapMs) })
      a.tonesSent += d.digits
    }
  }

  #send(a: AssistantTurn, audio: Buffer, dtmf?: { digits: string; toneMs: number; gapMs: number }): void {
    const output = this.#d.output
    if (output === undefined) return
    const durationMs = audio.length / BYTES_PER_MS[output]
    const chunkId = ++this.#chunkSeq
    a.playback.sent(chunkId, durationMs, this.#d.now())
    this.#d.emit({ type: 'audio', turnId: a.turnId, chunkId, audio, durationMs, ...(dtmf === undefined ? {} : { dtmf }) })
  }
}
