/**
 * The recording of one session: taps the caller audio the transport feeds the pipeline and the agent audio the
 * pipeline sends the transport, decodes both to PCM16 at the recording's rate and places them on the timeline.
 * Phone calls record at 8 kHz (the carrier's rate both ways: nothing to gain above it); browser sessions at 16 kHz,
 * the rate of the agent's voice there (the caller's 8 kHz audio is resampled up to it).
 */
import type { Kysely } from 'kysely'
import type { Log } from '../../core/log.js'
import type { Database, SessionRow } from '../store/schema.js'
import type { RecordingToMove } from '../store/recording-moves.js'
import { setRecordingSpans } from '../store/recordings.js'
import type { StoredPausedSpan, StoredSilencedSpan } from '../store/schema.js'
import type { StoredHeldSpan } from '../store/schema-transfer.js'
import { HeardAudio } from './heard-audio.js'
import { databaseSink } from './database-sink.js'
import { decoder } from './wire-decoder.js'
import { type InputAudioFormat, type OutputAudioFormat, type PipelineEvent, type PipelineInput, tapInput } from '../../pipeline/index.js'
import { ChunkRecorder } from './recorder.js'
import type { RecordedAudio, RecordingOutcome, RecordingSink } from './recording-port.js'
import { isDatabaseUnavailable } from '../store/database-errors.js'
import { EstimatedPlayout, MarkedPlayout, type AgentPlayout } from './agent-playout.js'
import { CallerTimeline } from './caller-timeline.js'

/** The caller channel is silenced this long before and after each keypad digit. */
export const DTMF_MASK_BEFORE_MS = 250
export const DTMF_MASK_AFTER_MS = 250

/** How a process records. */
export interface RecordingSettings {
  /** Silence the caller around keypad digits (default on). */
  maskDtmf: boolean
  /** Base of `recording_url` (PUBLIC_URL). */
  publicUrl: string
  /** Replaces the database sink (tests force storage failures with it). */
  sink?: ((db: Kysely<Database>, row: SessionRow, sampleRate: number) => RecordingSink) | undefined
  /** Told of each completed recording (the object store mover takes it from the database). */
  completed?: ((rec: RecordingToMove) => void) | undefined
}

/** The API URL of a session's recording. */
export function recordingUrl(publicUrl: string, row: Pick<SessionRow, 'agent_id' | 'id'>): string {
  return `${publicUrl}/v1/agents/${encodeURIComponent(row.agent_id)}/sessions/${encodeURIComponent(row.id)}/recording`
}

/** One session's recording; `finish` once the session's end is stored. */
export class SessionRecording {
  readonly sampleRate: number
  readonly url: string
  readonly #recorder: ChunkRecorder
  readonly #playout: AgentPlayout
  /** A wire chunk as the recorder takes it (PCM16, or the mu-law bytes themselves for a mu-law recorder). */
  readonly #decodeIn: (chunk: Buffer) => RecordedAudio
  readonly #decodeOut: (chunk: Buffer) => RecordedAudio
  readonly #maskDtmf: boolean
  readonly #row: SessionRow
  readonly #completed: RecordingSettings['completed']
  /** performance.now() when the session connected: the timeline's zero. */
  readonly #t0: number
  readonly #caller = new CallerTimeline()
  /** Where the last caller chunk ended on the timeline. */
  #lastCallerEnd: number | undefined
  readonly #inputSamples: (chunk: Buffer) => number
  /** Where relayed live audio (`heardLive`) ends on the timeline, ms. */
  #liveEndMs = 0
  /** Where the caller audio the pipeline heard sits on the timeline (the newest tap's pipeline). */
  #heard = new HeardAudio()
  readonly #silenced: StoredSilencedSpan[] = []
  readonly #paused: StoredPausedSpan[] = []
  readonly #held: StoredHeldSpan[] = []
  readonly #db: Kysely<Database>
  readonly #log: Log

  constructor(
    deps: { db: Kysely<Database>; log: Log; settings: RecordingSettings; retentionDays?: number | undefined },
    row: SessionRow,
    transport: { kind: string; audio: { input: InputAudioFormat; output: OutputAudioFormat } },
  ) {
    this.#t0 = timelineZero(row)
    this.sampleRate = transport.audio.output === 'pcm_16000' ? 16_000 : 8_000
    this.url = recordingUrl(deps.settings.publicUrl, row)
    const sink =
      deps.settings.sink?.(deps.db, row, this.sampleRate) ?? databaseSink(deps.db, row, this.sampleRate, this.url, deps.retentionDays)
    // Both ways mu-law on the wire: the recorder keeps the bytes as they came and went (see ChunkRecorderOptions).
    const mulaw = transport.audio.input === 'ulaw_8000' && transport.audio.output === 'ulaw_8000'
    this.#recorder = new ChunkRecorder({ sink, sampleRate: this.sampleRate, log: deps.log, isTransient: isDatabaseUnavailable, mulaw })
    this.#playout =
      transport.kind === 'carrier' || transport.kind === 'sip'
        ? new MarkedPlayout(this.#recorder, this.sampleRate)
        : new EstimatedPlayout(this.#recorder, this.sampleRate)
    // A mu-law recorder takes the caller's frame itself (it copies at once). Agent audio is kept by the playout until
    // played: always a copy.
    this.#decodeIn = mulaw ? (chunk) => chunk : decoder(transport.audio.input, this.sampleRate)
    this.#inputSamples = transport.audio.input === 'ulaw_8000' ? (chunk) => chunk.length : (chunk) => Math.floor(chunk.length / 2)
    this.#decodeOut = mulaw ? (chunk) => new Uint8Array(chunk) : decoder(transport.audio.output, this.sampleRate)
    this.#maskDtmf = deps.settings.maskDtmf
    this.#row = row
    this.#completed = deps.settings.completed
    this.#db = deps.db
    this.#log = deps.log
  }

  /** Creates the recording in the store (queued: nothing waits for it) and starts flushing. */
  start(): void {
    this.#recorder.start()
  }

  #now(): number {
    return performance.now() - this.#t0
  }

  /** The pipeline's input with the recording listening in; the pipeline always hears first. */
  tap(input: PipelineInput): PipelineInput {
    // The input's own clock of caller audio starts at this tap (a pipeline counts what it is given).
    const heard = new HeardAudio()
    this.#heard = heard
    return tapInput(input, {
      pushAudio: (chunk, mediaTimestampMs) => {
        input.pushAudio(chunk, mediaTimestampMs)
        const samples = this.#inputSamples(chunk)
        const end = this.#caller.callerEnd(samples, mediaTimestampMs, this.#now())
        heard.add(samples, this.#caller.lastMediaEnd, this.#caller.epoch)
        this.#lastCallerEnd = end
        this.#recorder.caller(this.#decodeIn(chunk), end)
      },
      dtmf: (digit) => {
        input.dtmf(digit)
        if (!this.#maskDtmf) return
        // The digit came right after the caller audio before it on the wire: it is masked on the caller's timeline.
        const at = this.#lastCallerEnd ?? this.#now()
        this.#recorder.maskCaller(at - DTMF_MASK_BEFORE_MS, at + DTMF_MASK_AFTER_MS)
      },
      markPlayed: (chunkId) => {
        input.markPlayed(chunkId)
        this.#playout.played(chunkId, this.#now())
      },
    })
  }

  /**
   * Silences the caller channel over redacted words. `words` are timed in seconds of the caller audio the
   * pipeline heard; words said one after another (a card number) are silenced as one stretch, pauses included.
   */
  silenceCaller(words: readonly { start: number; end: number; kind: string }[]): void {
    for (const span of joinWords(words)) {
      const zeroOf = (epoch: number) => this.#caller.zeroOf(epoch)
      const fromMs = this.#heard.timelineMs(span.start, zeroOf)
      const toMs = this.#heard.timelineMs(span.end, zeroOf)
      if (fromMs === undefined || toMs === undefined || toMs <= fromMs) continue
      this.#recorder.maskCaller(fromMs, toMs)
      if (this.#silenced.length < MAX_LISTED_SPANS)
        this.#silenced.push({ from_ms: Math.round(fromMs), to_ms: Math.round(toMs), kind: span.kind })
    }
  }

  /** Both channels are silent from now until `resume` (`response.recording`); true when it was not paused. */
  pause(): boolean {
    const last = this.#paused.at(-1)
    if ((last !== undefined && last.to_ms === null) || this.#paused.length >= MAX_LISTED_SPANS) return false
    // Whole ms, so the metadata names exactly the samples that are silent.
    const at = Math.round(this.#now())
    this.#recorder.pause(at)
    this.#paused.push({ from_ms: at, to_ms: null })
    return true
  }

  resume(): void {
    const last = this.#paused.at(-1)
    if (last === undefined || last.to_ms !== null) return
    const at = Math.round(this.#now())
    this.#recorder.resume(at)
    last.to_ms = at
  }

  /**
   * The caller was put on hold or taken off it: listed in the metadata (the audio goes on being recorded: what a
   * held caller hears is hold audio, and a SIP peer's music on hold reaches the recording as silence).
   */
  held(kind: StoredHeldSpan['kind'], on: boolean): void {
    const at = Math.round(this.#now())
    const open = this.#held.findLast((s) => s.kind === kind && s.to_ms === null)
    if (on && open === undefined && this.#held.length < MAX_LISTED_SPANS) this.#held.push({ kind, from_ms: at, to_ms: null })
    else if (!on && open !== undefined) open.to_ms = at
  }

  /**
   * Audio the caller hears as it is relayed to them, outside the pipeline (a warm transfer's bridged human): on the
   * agent channel as it plays. Frames play back to back, so one that arrives with jitter follows the previous one;
   * after a gap longer than `LIVE_GAP_MS` (the other party paused the stream) a new run starts where it arrived.
   */
  heardLive(audio: Buffer): void {
    const samples = this.#decodeOut(audio)
    const now = this.#now()
    const start = now > this.#liveEndMs + LIVE_GAP_MS ? now : this.#liveEndMs
    this.#recorder.agent(samples, start)
    this.#liveEndMs = start + (samples.length * 1000) / this.sampleRate
  }

  /** A pipeline event the transport was just given. */
  onEvent(e: PipelineEvent): void {
    if (e.type === 'audio') this.#playout.sent(e.chunkId, this.#decodeOut(e.audio), this.#now())
    else if (e.type === 'clear_playback') this.#playout.cleared(this.#now())
    else if (e.type === 'pause_playback') this.#playout.paused(this.#now())
    else if (e.type === 'resume_playback') this.#playout.resumed()
  }

  /** Completes the recording at the session's stored duration (undefined: the end was not stored, it fails). */
  async finish(durationMs: number | undefined): Promise<RecordingOutcome> {
    // Stored before the recording is marked completed: whoever sees it completed (session.update, the metadata
    // endpoint) finds what was silenced, paused and held already listed.
    const storeSpans = () =>
      setRecordingSpans(this.#db, this.#row.id, { silenced: this.#silenced, paused: this.#paused, held: this.#held }).catch((e: unknown) =>
        this.#log.error({ err: e }, 'recording privacy spans could not be stored'),
      )
    const outcome = await this.#recorder.finish(durationMs, storeSpans)
    if (outcome.status === 'completed') {
      this.#completed?.({
        sessionId: this.#row.id,
        organizationId: this.#row.organization_id,
        sampleRate: this.sampleRate,
        totalSamples: Math.round((outcome.durationMs * this.sampleRate) / 1000),
      })
    }
    return outcome
  }
}

/** Longest a relayed stream may pause and still be placed back to back (a carrier's jitter is well below it). */
const LIVE_GAP_MS = 60

/** Spans listed in a recording's metadata at most (each kind); more are still silenced, not listed. */
const MAX_LISTED_SPANS = 1000
/** Redacted words this close together (seconds) are one stretch: the pauses inside a number said slowly. */
const JOIN_GAP_S = 1.5

/** Consecutive words of one kind, close together, as one stretch each. */
function joinWords(words: readonly { start: number; end: number; kind: string }[]): { start: number; end: number; kind: string }[] {
  const out: { start: number; end: number; kind: string }[] = []
  for (const w of words) {
    const last = out.at(-1)
    if (last !== undefined && last.kind === w.kind && w.start - last.end <= JOIN_GAP_S && w.start >= last.start) {
      last.end = Math.max(last.end, w.end)
    } else out.push({ start: w.start, end: w.end, kind: w.kind })
  }
  return out
}

/** Longest believable delay between the session row's start and its recording's: beyond it the clocks disagree. */
const MAX_START_LAG_MS = 5_000

/**
 * performance.now() of the moment the session connected (`started_at`), so the file's timeline and length match
 * the session's. The row's time comes from the database clock: if it disagrees with ours, now is used instead.
 */
function timelineZero(row: SessionRow): number {
  const now = performance.now()
  if (row.started_at === null) return now
  const lag = Date.now() - row.started_at.getTime()
  return lag >= 0 && lag <= MAX_START_LAG_MS ? now - lag : now
}
