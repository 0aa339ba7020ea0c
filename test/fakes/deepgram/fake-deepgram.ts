// Fake of the Deepgram-compatible live STT API (stt.vendor_a): /v1/listen (nova-3) and /v2/listen (flux).
//
// Message shapes follow Deepgram's public documentation as read on 2026-11-29 (stored copies):
// - "Live Audio" API reference (developers.deepgram.com/reference/speech-to-text/listen-streaming) and the typed
//   messages of deepgram-js-sdk (src/api/resources/listen/resources/v1|v2/types, commit 1913abc, 2026-08-14):
//   `Results`, `Metadata` (`duration` in seconds), `SpeechStarted` (`channel` [index, count], `timestamp` s),
//   `UtteranceEnd`; v2 `Connected`, `TurnInfo`, `Error`.
// - "Finalize" (developers.deepgram.com/docs/finalize): the answer *may* carry `from_finalize: true`, "not
//   guaranteed if there is no significant amount of audio data to process" (`finalizeReply`).
// - "Close Stream" (docs/close-stream): `CloseStream` -> final results, `Metadata`, close.
// - "Speech Started" (docs/speech-started): `{"type":"SpeechStarted","channel":[0,1],"timestamp":9.54}`.
// - Changelog "Flux Word-Level Timestamps" (changelog/2026/7/2): each TurnInfo word has `start`/`end` (seconds).
// - "Force End Turn" (docs/flux/force-end-turn) and "Understanding the Flux State Machine" (docs/flux/state):
//   `ForceEndTurn` ends the turn in progress with an `EndOfTurn` whose `trigger` is `manual` (`model` when Flux
//   decides); the state machine has no ForceEndTurn edge out of its initial state, and the Voice Agent's "Force End
//   Turn" page says it plainly: with no turn in progress the message is ignored, nothing is sent.
import { randomUUID } from 'node:crypto'
import type { WebSocket } from 'ws'
import { FakeConnection, type FakeWsServer, startFakeWsServer, type UpgradeRecord } from './fake-ws-server.js'
import { decodeMulaw } from '../../../pipeline/audio/g711-mulaw.js'

/** A sample louder than this is speech when the fake times words. */
export const VOICED_LEVEL = 2000

/** A word as the vendor times it: seconds of the connection's audio. */
export interface TimedWord {
  word: string
  start: number
  end: number
}

/**
 * How the fake answers `Finalize` (v1): `always` a final result with `from_finalize: true` at once; `never` the final
 * result without the flag (nothing at all when there is nothing to say), as the docs allow; `{ lateMs }` the flagged
 * result that many ms later.
 */
export type FinalizeReply = 'always' | 'never' | { lateMs: number }

const ENCODINGS = new Set(['linear16', 'linear32', 'mulaw', 'alaw', 'flac', 'opus', 'ogg-opus', 'amr-nb', 'amr-wb', 'speex', 'g729'])

/** One live connection to the fake, with helpers that send correctly shaped vendor messages. */
export class FakeDeepgramConnection extends FakeConnection {
  readonly version: 'v1' | 'v2'
  readonly requestId = randomUUID()
  /** Transcript the fake answers the next `Finalize` (v1) or `ForceEndTurn` (v2) with. */
  pendingTranscript = ''
  /** What `pendingTranscript` becomes after each answer (see `FakeDeepgramOptions.finalizeTranscript`). */
  defaultTranscript = ''
  /** How the next `Finalize` is answered (v1). */
  finalizeReply: FinalizeReply = 'always'
  /** Runs after each `EndOfTurn` the fake sends (v2), e.g. to script the next turn. */
  onEndOfTurn: (() => void) | undefined
  #sequence = 0
  #turnIndex = 0
  #cursor = 0
  /** v2: a turn is in progress (`StartOfTurn` sent, its `EndOfTurn` not yet). */
  #inTurn = false

  constructor(socket: WebSocket, request: UpgradeRecord) {
    super(socket, request)
    this.version = request.path.startsWith('/v2/') ? 'v2' : 'v1'
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) this.#onControl(data.toString('utf8'))
      else if (this.version === 'v2') this.#onFluxAudio(data.length)
    })
    if (this.version === 'v2') this.send({ type: 'Connected', request_id: this.requestId, sequence_id: this.#next() })
  }

  /** The JSON messages the fake sent, in order (what the vendor said, for tests to check what came when). */
  readonly sent: Array<Record<string, unknown>> = []

  override send(message: object | string): void {
    if (typeof message === 'object') this.sent.push(message as Record<string, unknown>)
    super.send(message)
  }

  /** Control messages (`type` of each JSON text frame) in order. */
  get controls(): string[] {
    return this.messages.map((message) => String(message.type))
  }

  /**
   * v1 `Results`, words timed as the vendor times them: in seconds of the audio this connection received. A result
   * covers the audio received since the previous final; its words share the voiced part of that audio (first to
   * last sample above {@link VOICED_LEVEL}) evenly, or `words` gives them. Without voiced audio (a test sending no
   * speech) the result covers 0.5 s from the previous one and the words 0.1 s each.
   */
  sendResults(
    transcript: string,
    flags: { isFinal?: boolean; speechFinal?: boolean; fromFinalize?: boolean } = {},
    words?: readonly TimedWord[],
  ): void {
    const start = this.#cursor
    const received = this.receivedSeconds
    const voiced = this.voicedBetween(start, received)
    const duration = voiced === undefined ? 0.5 : received - start
    if (flags.isFinal) this.#cursor += duration
    const tokens = transcript.split(/\s+/).filter(Boolean)
    const slot = voiced === undefined ? 0.1 : (voiced.end - voiced.start) / Math.max(1, tokens.length)
    const from = voiced?.start ?? start
    const timed = words ?? tokens.map((word, i) => ({ word, start: from + i * slot, end: from + (i + 1) * slot }))
    this.send({
      type: 'Results',
      channel_index: [0, 1],
      duration,
      start,
      is_final: flags.isFinal ?? false,
      speech_final: flags.speechFinal ?? false,
      ...(flags.fromFinalize ? { from_finalize: true } : {}),
      channel: {
        alternatives: [
          {
            transcript,
            confidence: 0.98,
            words: timed.map((w) => ({
              word: w.word.toLowerCase(),
              start: w.start,
              end: w.end,
              confidence: 0.98,
              punctuated_word: w.word,
            })),
          },
        ],
      },
      metadata: { request_id: this.requestId, model_info: { name: 'nova-3', version: 'fake', arch: 'fake' }, model_uuid: 'fake' },
    })
  }

  /** Bytes of audio per second on this connection (from `encoding` and `sample_rate`). */
  get bytesPerSecond(): number {
    return Number(this.request.query.get('sample_rate') ?? 16000) * this.#bytesPerSample
  }

  /** One byte a sample for mu-law, two for linear16. */
  get #bytesPerSample(): number {
    return this.request.query.get('encoding') === 'mulaw' ? 1 : 2
  }

  /** Seconds of audio received so far: the vendor's clock. */
  get receivedSeconds(): number {
    return this.audioBytes / this.bytesPerSecond
  }

  /** The received audio as samples (mu-law or linear16); `from`/`to` in bytes limit it to a stretch. */
  samples(from = 0, to = this.audioBytes): Int16Array {
    const audio = this.audioBetween(from, to)
    if (this.#bytesPerSample === 1) return decodeMulaw(audio)
    const out = new Int16Array(Math.floor(audio.length / 2))
    for (let i = 0; i < out.length; i++) out[i] = audio.readInt16LE(i * 2)
    return out
  }

  /** First and last voiced sample between two times (seconds of received audio), or undefined when none is. */
  voicedBetween(from: number, to: number): { start: number; end: number } | undefined {
    const bytesPerSample = this.#bytesPerSample
    const total = Math.floor(this.audioBytes / bytesPerSample)
    const perSecond = total / Math.max(this.receivedSeconds, 1e-9)
    const a = Math.max(0, Math.floor(from * perSecond))
    const b = Math.min(total, Math.ceil(to * perSecond))
    if (b <= a) return undefined
    // Only the stretch asked about is decoded (sample a is the first of it).
    const samples = this.samples(a * bytesPerSample, b * bytesPerSample)
    let first = -1
    let last = -1
    for (let i = 0; i < samples.length; i++) {
      if (Math.abs(samples[i] as number) <= VOICED_LEVEL) continue
      if (first < 0) first = i
      last = i
    }
    return first < 0 ? undefined : { start: (a + first) / perSecond, end: (a + last + 1) / perSecond }
  }

  /**
   * v1 `SpeechStarted`: `channel` is [index, count] and `timestamp` the second of received audio where speech was
   * first heard (the first voiced sample since the last final, or the end of what was received when none is).
   */
  sendSpeechStarted(): void {
    const received = this.receivedSeconds
    const timestamp = this.voicedBetween(this.#cursor, received)?.start ?? received
    this.send({ type: 'SpeechStarted', channel: [0, 1], timestamp })
  }

  /** v1 `UtteranceEnd`. */
  sendUtteranceEnd(): void {
    this.send({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: this.#cursor })
  }

  /**
   * v2 `TurnInfo` with the given event; `EndOfTurn` advances the turn index afterwards. The words are timed like
   * {@link sendResults}' (seconds of received audio, sharing the voiced part of the turn's audio), or `words` gives
   * them. `trigger` (EndOfTurn only) says who ended the turn: `model`, `manual` (ForceEndTurn) or `timeout`.
   */
  sendTurnInfo(
    event: 'StartOfTurn' | 'Update' | 'EagerEndOfTurn' | 'TurnResumed' | 'EndOfTurn',
    transcript: string,
    words?: readonly TimedWord[],
    trigger: 'model' | 'manual' | 'timeout' = 'model',
  ): void {
    const start = this.#cursor
    const received = this.receivedSeconds
    const tokens = transcript.split(/\s+/).filter(Boolean)
    const timed = words ?? this.#spread(tokens, start, received)
    this.#inTurn = event !== 'EndOfTurn'
    this.send({
      type: 'TurnInfo',
      request_id: this.requestId,
      sequence_id: this.#next(),
      event,
      turn_index: this.#turnIndex,
      audio_window_start: start,
      audio_window_end: received,
      transcript,
      words: timed.map((w) => ({ word: w.word, confidence: 0.97, start: w.start, end: w.end })),
      end_of_turn_confidence: event === 'EndOfTurn' ? 0.9 : 0.1,
      ...(event === 'EndOfTurn' && { trigger }),
    })
    if (event === 'EndOfTurn') {
      this.#turnIndex++
      this.#cursor = received
      this.onEndOfTurn?.()
    }
  }

  /** Words sharing the voiced part of [from, to) evenly; 0.1 s each from `from` when nothing there is voiced. */
  #spread(tokens: readonly string[], from: number, to: number): TimedWord[] {
    const voiced = this.voicedBetween(from, to)
    const slot = voiced === undefined ? 0.1 : (voiced.end - voiced.start) / Math.max(1, tokens.length)
    const at = voiced?.start ?? from
    return tokens.map((word, i) => ({ word, start: at + i * slot, end: at + (i + 1) * slot }))
  }

  /**
   * Flux starts a turn once it hears words: with a transcript pending and no turn in progress, voiced audio makes
   * the fake send `StartOfTurn` with the pending transcript's first word (a StartOfTurn is never empty).
   */
  #onFluxAudio(bytes: number): void {
    if (this.#inTurn || this.pendingTranscript.trim() === '') return
    // Only the frame that came is looked at: earlier ones were, when they came.
    const received = this.receivedSeconds
    if (this.voicedBetween(received - bytes / this.bytesPerSecond, received) === undefined) return
    const first = this.pendingTranscript.trim().split(/\s+/)[0] as string
    this.sendTurnInfo('StartOfTurn', first)
  }

  /** v2 `Error` then a close, as the vendor does on a fatal problem. */
  sendFluxError(code: string, description: string, closeCode = 1011): void {
    this.send({ type: 'Error', sequence_id: this.#next(), code, description })
    this.close(closeCode, description.slice(0, 100))
  }

  #next(): number {
    return this.#sequence++
  }

  #onControl(text: string): void {
    let message: { type?: unknown }
    try {
      message = JSON.parse(text) as { type?: unknown }
    } catch {
      this.close(1008, 'DATA-0000')
      return
    }
    if (this.version === 'v1') {
      if (message.type === 'Finalize') this.#answerFinalize()
      else if (message.type === 'CloseStream') {
        this.send({
          type: 'Metadata',
          transaction_key: 'deprecated',
          request_id: this.requestId,
          sha256: 'fake',
          created: new Date().toISOString(),
          duration: this.receivedSeconds,
          channels: 1,
        })
        this.close(1000, '')
      }
    } else if (message.type === 'ForceEndTurn') {
      // Ignored with no turn in progress, as Flux does (see the header).
      if (!this.#inTurn) return
      const transcript = this.pendingTranscript
      this.pendingTranscript = this.defaultTranscript
      this.sendTurnInfo('EndOfTurn', transcript, undefined, 'manual')
    } else if (message.type === 'CloseStream') {
      this.close(1000, '')
    }
  }

  /** The answer to `Finalize`, as `finalizeReply` says. The transcript is the one pending when it came. */
  #answerFinalize(): void {
    const transcript = this.pendingTranscript
    this.pendingTranscript = this.defaultTranscript
    const reply = this.finalizeReply
    if (reply === 'always') {
      this.sendResults(transcript, { isFinal: true, fromFinalize: true })
    } else if (reply === 'never') {
      if (transcript.trim() !== '') this.sendResults(transcript, { isFinal: true })
    } else {
      setTimeout(() => this.sendResults(transcript, { isFinal: true, fromFinalize: true }), reply.lateMs).unref()
    }
  }
}

/** Options of {@link startFakeDeepgram}. */
export interface FakeDeepgramOptions {
  /** The key to accept in `Authorization: Token <key>`. */
  apiKey: string
  /** Runs for each accepted connection, e.g. to send transcripts after some audio. */
  script?: (connection: FakeDeepgramConnection) => void | Promise<void>
  /** Transcript of every finalized turn unless a test sets `pendingTranscript` (default '': nothing was said). */
  finalizeTranscript?: string
  /** How `Finalize` is answered on every connection (default `always`); a test may change a connection's own. */
  finalizeReply?: FinalizeReply
}

/**
 * A `script` that answers each `Finalize` (v1), or ends each Flux turn (v2), with the next entry of `transcripts`
 * (taken as the test pushes them; an empty transcript when none is left), so a test scripts what the caller "said"
 * turn by turn.
 */
export function transcriptsInTurn(transcripts: string[]): (connection: FakeDeepgramConnection) => void {
  return (connection) => {
    const feed = () => {
      connection.pendingTranscript = transcripts.shift() ?? ''
    }
    feed()
    if (connection.version === 'v2') {
      connection.onEndOfTurn = () => setImmediate(feed)
      return
    }
    connection.socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary && data.toString().includes('Finalize')) setImmediate(feed)
    })
  }
}

/**
 * Start the fake on 127.0.0.1:0. Refuses with 401 on a wrong key, 404 on other paths and 400 on a bad query, like the
 * vendor; answers `Finalize` with a result (`pendingTranscript`) as `finalizeReply` says, `CloseStream` with
 * `Metadata` and a 1000 close (v1) or a close (v2), `ForceEndTurn` in a turn with `EndOfTurn` (v2), and starts a
 * Flux turn when voiced audio comes with a transcript pending. Everything received is recorded.
 */
export async function startFakeDeepgram(options: FakeDeepgramOptions): Promise<FakeWsServer<FakeDeepgramConnection>> {
  return startFakeWsServer({
    verify(request, url) {
      if (url.pathname !== '/v1/listen' && url.pathname !== '/v2/listen') {
        return { accept: false, status: 404, body: '{"err_code":"NOT_FOUND"}' }
      }
      if (request.headers.authorization !== `Token ${options.apiKey}`) {
        return {
          accept: false,
          status: 401,
          body: '{"err_code":"INVALID_AUTH","err_msg":"Invalid credentials.","request_id":"fake"}',
        }
      }
      const encoding = url.searchParams.get('encoding')
      const sampleRate = Number(url.searchParams.get('sample_rate'))
      const model = url.searchParams.get('model') ?? ''
      const badModel = url.pathname === '/v2/listen' ? !model.startsWith('flux') : model.startsWith('flux')
      if ((encoding !== null && !ENCODINGS.has(encoding)) || (encoding !== null && !(sampleRate > 0)) || badModel) {
        return { accept: false, status: 400, body: '{"err_code":"Bad Request","err_msg":"Bad Request: invalid query"}' }
      }
      return { accept: true }
    },
    wrap(socket, upgrade) {
      const connection = new FakeDeepgramConnection(socket, upgrade)
      connection.defaultTranscript = connection.pendingTranscript = options.finalizeTranscript ?? ''
      if (options.finalizeReply !== undefined) connection.finalizeReply = options.finalizeReply
      void options.script?.(connection)
      return connection
    },
  })
}
