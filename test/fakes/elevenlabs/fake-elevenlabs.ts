// Fake of the ElevenLabs-compatible multi-context TTS WebSocket (tts.vendor_a).
//
// Follows ElevenLabs' public documentation as read on 2026-11-29 (stored copies):
// - API reference "Multi-Context WebSocket" (elevenlabs.io/docs/api-reference/text-to-speech/
//   v-1-text-to-speech-voice-id-multi-stream-input): its AsyncAPI schemas, which elevenlabs-js mirrors
//   (src/api/types/AudioOutputMulti.ts, FinalOutputMulti.ts, commit 30e6f2c): replies are AudioOutputMulti
//   {audio, normalizedAlignment, alignment (null without sync_alignment), contextId} and FinalOutputMulti
//   {isFinal: true, contextId}; requests InitialiseContext {text: " ", context_id, voice_settings}, SendTextMulti,
//   FlushContextClient, CloseContextClient, CloseSocketClient, KeepContextAlive {text: "", context_id}.
// - API reference "WebSocket" (v-1-text-to-speech-voice-id-stream-input): the example audio message with its
//   alignment, which test/fakes-conformance/elevenlabs.test.ts replays to the adapter.
import type { WebSocket } from 'ws'
import { FakeConnection, type FakeWsServer, startFakeWsServer, type UpgradeRecord } from '../deepgram/fake-ws-server.js'

const PATH = /^\/v1\/text-to-speech\/([A-Za-z0-9]+)\/multi-stream-input$/
const FORMATS = { ulaw_8000: 8000, pcm_16000: 16000 } as const

/** Output formats the fake can synthesize. */
export type FakeTtsFormat = keyof typeof FORMATS

/**
 * The fake's deterministic speech: a 440 Hz tone at 30 % amplitude, samples `start..start+count` of the context's
 * continuous signal, as PCM16 little-endian or G.711 mu-law.
 */
export function fakeToneAudio(format: FakeTtsFormat, start: number, count: number): Buffer {
  const rate = FORMATS[format]
  const out = Buffer.alloc(format === 'pcm_16000' ? count * 2 : count)
  for (let i = 0; i < count; i++) {
    const sample = Math.round(Math.sin((2 * Math.PI * 440 * (start + i)) / rate) * 0.3 * 32767)
    if (format === 'pcm_16000') out.writeInt16LE(sample, i * 2)
    else out[i] = mulawEncode(sample)
  }
  return out
}

/** Samples the fake produces for `text` (trimmed) at `msPerChar`. */
export function fakeSampleCount(format: FakeTtsFormat, text: string, msPerChar: number): number {
  return Math.round((text.trim().length * msPerChar * FORMATS[format]) / 1000)
}

function mulawEncode(sample: number): number {
  const BIAS = 0x84
  const sign = sample < 0 ? 0x80 : 0
  let magnitude = Math.min(Math.abs(sample), 32635) + BIAS
  let exponent = 7
  for (let mask = 0x4000; (magnitude & mask) === 0 && exponent > 0; mask >>= 1) exponent--
  const mantissa = (magnitude >> (exponent + 3)) & 0x0f
  magnitude = 0
  return ~(sign | (exponent << 4) | mantissa) & 0xff
}

interface FakeContext {
  text: string
  samples: number
  chain: Promise<void>
  closing: boolean
}

/** One live connection: per-context text buffers, deterministic audio on flush, isFinal on close. */
export class FakeElevenLabsConnection extends FakeConnection {
  readonly format: FakeTtsFormat
  readonly voiceId: string
  readonly contexts = new Map<string, FakeContext>()
  readonly #msPerChar: number
  readonly #chunkMs: number
  readonly #chunkIntervalMs: number

  constructor(
    socket: WebSocket,
    request: UpgradeRecord,
    options: Required<Pick<FakeElevenLabsOptions, 'msPerChar' | 'chunkMs' | 'chunkIntervalMs'>>,
  ) {
    super(socket, request)
    this.format = request.query.get('output_format') as FakeTtsFormat
    this.voiceId = PATH.exec(request.path)?.[1] ?? ''
    this.#msPerChar = options.msPerChar
    this.#chunkMs = options.chunkMs
    this.#chunkIntervalMs = options.chunkIntervalMs
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) this.#onMessage(data.toString('utf8'))
    })
  }

  /** Text frames for one context, in order. */
  messagesFor(contextId: string): Array<Record<string, unknown>> {
    return this.messages.filter((message) => message.context_id === contextId)
  }

  /** A vendor error message (not closing the socket). */
  sendError(message: string, error = 'invalid_request', contextId?: string): void {
    this.send({ message, error, code: 1008, ...(contextId ? { contextId } : {}) })
  }

  #onMessage(text: string): void {
    let message: Record<string, unknown>
    try {
      message = JSON.parse(text) as Record<string, unknown>
    } catch {
      this.close(1007, 'invalid JSON')
      return
    }
    if (message.close_socket === true) {
      void this.#closeSocket()
      return
    }
    const contextId = typeof message.context_id === 'string' ? message.context_id : 'default'
    let context = this.contexts.get(contextId)
    if (context === undefined) {
      if (message.close_context === true) return
      context = { text: '', samples: 0, chain: Promise.resolve(), closing: false }
      this.contexts.set(contextId, context)
    }
    if (context.closing) return
    if (typeof message.text === 'string') context.text += message.text
    if (message.flush === true) this.#generate(contextId, context)
    if (message.close_context === true) {
      context.closing = true
      context.text = ''
      context.chain = context.chain.then(() => {
        this.send({ isFinal: true, contextId })
        this.contexts.delete(contextId)
      })
    }
  }

  #generate(contextId: string, context: FakeContext): void {
    const text = context.text
    context.text = ''
    if (!text.trim()) return
    const total = fakeSampleCount(this.format, text, this.#msPerChar)
    const perChunk = Math.round((this.#chunkMs * FORMATS[this.format]) / 1000)
    context.chain = context.chain.then(async () => {
      for (let sent = 0; sent < total; sent += perChunk) {
        const count = Math.min(perChunk, total - sent)
        const audio = fakeToneAudio(this.format, context.samples, count)
        context.samples += count
        // AudioOutputMulti has no isFinal: only FinalOutputMulti carries it.
        this.send({ audio: audio.toString('base64'), normalizedAlignment: null, alignment: null, contextId })
        await new Promise((resolve) => setTimeout(resolve, this.#chunkIntervalMs))
      }
    })
  }

  async #closeSocket(): Promise<void> {
    const pending = [...this.contexts.entries()]
    for (const [contextId, context] of pending) {
      if (context.closing) continue
      context.closing = true
      context.chain = context.chain.then(() => {
        this.send({ isFinal: true, contextId })
        this.contexts.delete(contextId)
      })
    }
    await Promise.all(pending.map(([, context]) => context.chain))
    this.close(1000, '')
  }
}

/** Options of {@link startFakeElevenLabs}. */
export interface FakeElevenLabsOptions {
  /** The key to accept in the `xi-api-key` header. */
  apiKey: string
  /** Audio length per character of text. Default 20 ms. */
  msPerChar?: number
  /** Audio per message. Default 100 ms. */
  chunkMs?: number
  /** Delay between audio messages, to let tests act mid-utterance. Default 0. */
  chunkIntervalMs?: number
  /** Runs for each accepted connection. */
  script?: (connection: FakeElevenLabsConnection) => void | Promise<void>
}

/**
 * Start the fake on 127.0.0.1:0. Refuses with 401 on a wrong `xi-api-key`, 404 on other paths, 400 on an unknown
 * output format or missing model. Text accumulates per `context_id`; `flush` turns it into tone audio (length
 * proportional to the text, continuous per context); `close_context` finishes pending audio, then `isFinal`;
 * `close_socket` finishes every context, then closes with 1000.
 */
export async function startFakeElevenLabs(options: FakeElevenLabsOptions): Promise<FakeWsServer<FakeElevenLabsConnection>> {
  const generation = {
    msPerChar: options.msPerChar ?? 20,
    chunkMs: options.chunkMs ?? 100,
    chunkIntervalMs: options.chunkIntervalMs ?? 0,
  }
  return startFakeWsServer({
    verify(request, url) {
      if (!PATH.test(url.pathname)) return { accept: false, status: 404, body: '{"detail":"Not Found"}' }
      if (request.headers['xi-api-key'] !== options.apiKey) {
        return { accept: false, status: 401, body: '{"detail":{"status":"invalid_api_key","message":"Invalid API key"}}' }
      }
      const format = url.searchParams.get('output_format') ?? ''
      if (!(format in FORMATS) || !url.searchParams.get('model_id')) {
        return { accept: false, status: 400, body: '{"detail":{"status":"invalid_request"}}' }
      }
      return { accept: true }
    },
    wrap(socket, upgrade) {
      const connection = new FakeElevenLabsConnection(socket, upgrade, generation)
      void options.script?.(connection)
      return connection
    },
  })
}
