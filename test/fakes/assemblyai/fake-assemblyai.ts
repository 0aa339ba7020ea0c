// Fake of the AssemblyAI-compatible Universal-Streaming v3 API (stt.vendor_b): /v3/ws.
//
// Message shapes follow AssemblyAI's public documentation as read on 2026-11-29 (stored copies):
// - "Streaming API: Message Sequence Breakdown" (assemblyai.com/docs/speech-to-text/universal-streaming/message-sequence;
//   AssemblyAI/assemblyai-api-spec universal-streaming-messages.mdx, commit 0d9c6a3): `Begin`, `Turn` (words timed in
//   ms of the session's audio), the unformatted end of turn carrying the `utterance`, then the formatted one with
//   `utterance: ""`.
// - "Message Sequence" (assemblyai.com/docs/streaming/message-sequence): `SpeechStarted` {timestamp (ms of the
//   audio), confidence} — sent by Universal-3 Pro Streaming only, so the fake sends it only when a test asks —
//   `Terminate` -> `Termination` {audio_duration_seconds, session_duration_seconds} and close 1000.
// - "Common session errors and closures" (assemblyai.com/docs/streaming/common-session-errors-and-closures): an
//   `Error` {error_code, error} text frame right before the close with the same code.
// test/fakes-conformance/assemblyai.test.ts replays those pages' examples to the adapter.
import { randomUUID } from 'node:crypto'
import type { WebSocket } from 'ws'
import { FakeConnection, type FakeWsServer, startFakeWsServer, type UpgradeRecord } from '../deepgram/fake-ws-server.js'

/** One live connection to the fake, with helpers that send correctly shaped vendor messages. */
export class FakeAssemblyAiConnection extends FakeConnection {
  readonly sessionId = randomUUID()
  readonly sampleRate: number
  readonly bytesPerSample: number
  readonly formatTurns: boolean
  /** Transcript the fake answers a `ForceEndpoint` with (empty: no turn is reported). */
  pendingTranscript = ''
  #turnOrder = 0
  /** Where the current turn's audio began, ms of the session's audio. */
  #turnStartMs = 0
  #openedAt = Date.now()

  constructor(socket: WebSocket, request: UpgradeRecord) {
    super(socket, request)
    this.sampleRate = Number(request.query.get('sample_rate') ?? 16000)
    this.bytesPerSample = request.query.get('encoding') === 'pcm_mulaw' ? 1 : 2
    this.formatTurns = request.query.get('format_turns') === 'true'
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) this.#onAudio(data)
      else this.#onControl(data.toString('utf8'))
    })
    this.send({ type: 'Begin', id: this.sessionId, expires_at: Math.floor(Date.now() / 1000) + 3600 })
  }

  /** Control messages (`type` of each JSON text frame) in order. */
  get controls(): string[] {
    return this.messages.map((message) => String(message.type))
  }

  /** Duration in ms of each binary message received. */
  get chunkDurationsMs(): number[] {
    return this.binarySizes.map((size) => (size / this.bytesPerSample / this.sampleRate) * 1000)
  }

  /** `SpeechStarted` (Universal-3 Pro Streaming sends it; Universal Streaming goes straight to the first `Turn`). */
  sendSpeechStarted(): void {
    this.send({ type: 'SpeechStarted', timestamp: Math.round(this.receivedMs), confidence: 0.9 })
  }

  /**
   * A partial `Turn` (`end_of_turn: false`); `transcript` holds the finalized words, `partialWords` the rest.
   */
  sendPartial(transcript: string, partialWords: string[] = []): void {
    this.send(this.#turn(transcript, partialWords, false, false))
  }

  /** End the current turn: the unformatted end message, then (with `format_turns`) the formatted one. */
  sendEndOfTurn(transcript: string, formatted = transcript): void {
    this.send(this.#turn(transcript.toLowerCase().replace(/[.,!?]/g, ''), [], true, false))
    if (this.formatTurns) this.send(this.#turn(formatted, [], true, true))
    this.#turnOrder++
  }

  /** An `Error` frame then a close with the same code, as the vendor does. */
  sendError(code: number, error: string): void {
    this.send({ type: 'Error', error_code: code, error })
    this.close(code, error.length > 120 ? 'See Error message for details' : error)
  }

  /** ms of audio received so far: the vendor's clock (word timings are ms of the session's audio). */
  get receivedMs(): number {
    return (this.audioBytes / this.bytesPerSample / this.sampleRate) * 1000
  }

  /**
   * A `Turn`. Its words share the audio received since the previous turn ended evenly (100 ms each when none was
   * received), as the vendor times words within the audio it heard.
   */
  #turn(transcript: string, partialWords: string[], endOfTurn: boolean, formatted: boolean): object {
    const finals = transcript.split(/\s+/).filter(Boolean)
    const count = finals.length + partialWords.length
    const heard = this.receivedMs - this.#turnStartMs
    const slot = heard > 0 && count > 0 ? heard / count : 100
    const timed = (text: string, i: number, final: boolean) => ({
      start: Math.round(this.#turnStartMs + i * slot),
      end: Math.round(this.#turnStartMs + (i + 1) * slot),
      text,
      confidence: final ? 0.9 : 0.8,
      word_is_final: final,
    })
    const words = [
      ...finals.map((text, i) => timed(text, i, true)),
      ...partialWords.map((text, i) => timed(text, finals.length + i, false)),
    ]
    if (endOfTurn && (formatted || !this.formatTurns)) this.#turnStartMs = this.receivedMs
    // The documented sequence carries the finished utterance on the unformatted end of turn, not on the formatted one.
    return {
      type: 'Turn',
      turn_order: this.#turnOrder,
      turn_is_formatted: formatted,
      end_of_turn: endOfTurn,
      transcript,
      end_of_turn_confidence: endOfTurn ? 0.9 : 0.05,
      words,
      utterance: endOfTurn && !formatted ? transcript : '',
    }
  }

  #onAudio(data: Buffer): void {
    const ms = (data.length / this.bytesPerSample / this.sampleRate) * 1000
    if (ms < 50 || ms > 1000) {
      this.sendError(3007, `Input duration violation: ${ms.toFixed(0)} ms. Expected between 50 and 1000 ms`)
    }
  }

  #onControl(text: string): void {
    let message: { type?: unknown }
    try {
      message = JSON.parse(text) as { type?: unknown }
    } catch {
      this.sendError(3006, `Invalid JSON: ${text.slice(0, 40)}`)
      return
    }
    if (message.type === 'ForceEndpoint') {
      if (this.pendingTranscript) this.sendEndOfTurn(this.pendingTranscript)
      this.pendingTranscript = ''
    } else if (message.type === 'Terminate') {
      const audioSeconds = this.audioBytes / this.bytesPerSample / this.sampleRate
      this.send({
        type: 'Termination',
        audio_duration_seconds: Math.round(audioSeconds),
        session_duration_seconds: Math.round((Date.now() - this.#openedAt) / 1000),
      })
      this.close(1000, '')
    } else if (message.type !== 'UpdateConfiguration' && message.type !== 'KeepAlive') {
      this.sendError(3006, `Invalid Message Type: ${String(message.type)}`)
    }
  }
}

/** Options of {@link startFakeAssemblyAi}. */
export interface FakeAssemblyAiOptions {
  /** The key to accept in the `Authorization` header (raw key, no scheme). */
  apiKey: string
  /** Runs for each accepted connection. */
  script?: (connection: FakeAssemblyAiConnection) => void | Promise<void>
}

/**
 * Start the fake on 127.0.0.1:0. Refuses with 401 on a wrong key, 404 on other paths, 400 on a bad sample rate,
 * encoding or a missing speech_model. Sends `Begin` on connect; enforces 50..1000 ms audio messages (Error 3007 +
 * close); answers `ForceEndpoint` with an end-of-turn for `pendingTranscript`, `Terminate` with `Termination` + close.
 */
export async function startFakeAssemblyAi(options: FakeAssemblyAiOptions): Promise<FakeWsServer<FakeAssemblyAiConnection>> {
  return startFakeWsServer({
    verify(request, url) {
      if (url.pathname !== '/v3/ws') return { accept: false, status: 404, body: '{"error":"Not found"}' }
      if (request.headers.authorization !== options.apiKey) {
        return { accept: false, status: 401, body: '{"error":"Unauthorized Connection: Invalid API key"}' }
      }
      const rate = Number(url.searchParams.get('sample_rate') ?? 16000)
      const encoding = url.searchParams.get('encoding') ?? 'pcm_s16le'
      const keyterms = url.searchParams.get('keyterms_prompt')
      const keytermsOk = keyterms === null || Array.isArray(safeJson(keyterms))
      if (!Number.isInteger(rate) || rate <= 0 || !['pcm_s16le', 'pcm_mulaw'].includes(encoding) || !keytermsOk) {
        return { accept: false, status: 400, body: '{"error":"Invalid connection parameters"}' }
      }
      if (!url.searchParams.get('speech_model')) {
        return { accept: false, status: 400, body: '{"error":"speech_model is required"}' }
      }
      return { accept: true }
    },
    wrap(socket, upgrade) {
      const connection = new FakeAssemblyAiConnection(socket, upgrade)
      void options.script?.(connection)
      return connection
    },
  })
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
