// A self-hosted speech server on a real port, speaking OpenAI's audio API as Whisper-family and OpenAI-format speech
// servers do (whisper.cpp's whisper-server with --inference-path, speaches/faster-whisper-server, vLLM, LocalAI,
// Kokoro-FastAPI). Wire formats, from the stored reference copies:
// - `POST /v1/audio/transcriptions`: multipart/form-data with `file`, `model`, `language`, `prompt`, `temperature`,
//   `response_format` (json | verbose_json | text), `timestamp_granularities[]`, `stream` (openai/openai-openapi
//   CreateTranscriptionRequest). `json` answers {text}; `verbose_json` answers {task, language, duration, text,
//   words: [{word, start, end}], segments} (CreateTranscriptionResponseVerboseJson, TranscriptionWord). With
//   `stream=true` the answer is text/event-stream of `data: {"type":"transcript.text.delta","delta":...}` events and a
//   last `{"type":"transcript.text.done","text":...}` (TranscriptTextDeltaEvent / TranscriptTextDoneEvent).
// - Errors: the status with OpenAI's error body {error: {message, type, param, code}}.
// - With `flavor: 'whisper.cpp'` transcriptions are answered as whisper.cpp's whisper-server answers them
//   (whisper-cpp-answers.ts: the text ending in a newline, tokens as `segments[].words`, plain-text 400s).
// - `POST /v1/audio/speech`: JSON {model, input, voice, response_format, speed} (CreateSpeechRequest); `pcm` is raw
//   16-bit signed little-endian mono at 24 kHz, streamed with chunked transfer as it is made (Kokoro-FastAPI streams
//   the same way); `wav` is that audio behind a RIFF header whose sizes are unknown (0xFFFFFFFF) when streamed.
// - `GET /v1/realtime?intent=transcription` (OpenAI Realtime, transcription session): server sends
//   `session.created`; client `session.update` {session: {type: "transcription", audio: {input: {format,
//   transcription, turn_detection}}}} is answered `session.updated`; `input_audio_buffer.append` {audio: base64};
//   `input_audio_buffer.commit` is answered, in this order, `input_audio_buffer.committed` {item_id,
//   previous_item_id}, `conversation.item.added` {item}, `conversation.item.input_audio_transcription.delta`
//   {item_id, content_index, delta}...,
//   `conversation.item.input_audio_transcription.completed` {item_id, content_index, transcript}
//   (openai-python types/realtime/*). Errors are `error` {error: {type, code, message}}.
// - `GET /v1/realtime` without the intent (vLLM's vllm/entrypoints/speech_to_text/realtime/protocol.py):
//   `session.created` {id, created}; `session.update` {model}; `input_audio_buffer.commit` starts an utterance,
//   `input_audio_buffer.append` {audio: base64 PCM16 16 kHz}, `input_audio_buffer.commit` {final: true} ends it and is
//   answered `transcription.delta` {delta}... and `transcription.done` {text, usage}; errors `error` {error, code}.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type WebSocket, WebSocketServer } from 'ws'
import { readWav } from '../../../pipeline/audio/wav.js'
import { type RealtimeRecord, serveRealtime } from './fake-realtime.js'
import { boundaryOf, parseMultipart } from './multipart.js'
import { whisperCppError, whisperCppTranscription } from './whisper-cpp-answers.js'

export type { RealtimeRecord }

/** A transcription request as the fake read it. */
export interface TranscriptionRecord {
  headers: IncomingHttpHeaders
  /** The text fields, by name, and their order. */
  fields: Record<string, string>
  order: string[]
  filename: string
  fileType: string
  wav: { sampleRate: number; samples: Int16Array }
  at: number
  /**
   * performance.now() of the fake's process when the whole body was in, and when the last byte of the answer was
   * handed to the socket: the server's own time is the span between them.
   */
  receivedAt: number
  writtenAt?: number
}

/** How the fake answers one transcription request. */
export interface TranscriptionScript {
  text?: string
  /** Words with timings in seconds of the file; default: the text's words spread over the file. */
  words?: Array<{ word: string; start: number; end: number }>
  delayMs?: number
  /** Answer this status with OpenAI's error body instead. */
  status?: number
  /** Answer this raw body (as text/html) instead. */
  raw?: string
  /** Never answer. */
  hang?: boolean
  /** With `stream=true`: these deltas, `deltaMs` apart (default: the text's words). */
  deltas?: string[]
  deltaMs?: number
}

/** A speech request as the fake read it. */
export interface SpeechRecord {
  headers: IncomingHttpHeaders
  json: Record<string, unknown>
  at: number
  /** performance.now() of the fake's process when the whole body was in, and when the first audio was written. */
  receivedAt: number
  firstByteAt?: number
  aborted: boolean
}

/** Options and scripts of the fake; every script may be replaced while it runs. */
export interface FakeSpeechOptions {
  /** Require `Authorization: Bearer <apiKey>`; undefined: no key needed (a server of one's own). */
  apiKey?: string
  /** Speech audio per input character (ms of 24 kHz audio). Default 10. */
  msPerChar?: number
  /** Speech chunk size (ms) and pause between chunks. Default 100 ms, 5 ms. */
  chunkMs?: number
  chunkIntervalMs?: number
  /** Wait before the first speech byte. Default 0. */
  firstByteMs?: number
  /** Answer transcriptions as OpenAI does (default) or as whisper.cpp's whisper-server does (whisper-cpp-answers.ts). */
  flavor?: 'openai' | 'whisper.cpp'
}

export interface FakeOpenAiSpeech {
  /** Base URL, ending in `/v1`. */
  baseUrl: string
  transcriptions: TranscriptionRecord[]
  speech: SpeechRecord[]
  realtime: RealtimeRecord[]
  transcribe: (request: TranscriptionRecord) => TranscriptionScript
  /** Text of a committed realtime turn (its audio), or an instruction to close the socket instead. */
  realtimeText: (audio: Buffer, record: RealtimeRecord) => string | { close: number }
  speechStatus: number | undefined
  /** The `response_format`s transcription accepts (a model without word timings refuses `verbose_json`). */
  formats: string[]
  options: FakeSpeechOptions
  close(): Promise<void>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function errorBody(message: string, type = 'invalid_request_error', code: string | null = null) {
  return JSON.stringify({ error: { message, type, param: null, code } })
}

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeOpenAiSpeech(options: FakeSpeechOptions = {}): Promise<FakeOpenAiSpeech> {
  const sockets = new Set<WebSocket>()
  const fake: FakeOpenAiSpeech = {
    baseUrl: '',
    transcriptions: [],
    speech: [],
    realtime: [],
    transcribe: () => ({ text: 'hello' }),
    realtimeText: () => 'hello',
    speechStatus: undefined,
    formats: ['json', 'verbose_json', 'text'],
    options,
    close: async () => {
      for (const s of sockets) s.terminate()
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
  const authorized = (headers: IncomingHttpHeaders) => options.apiKey === undefined || headers.authorization === `Bearer ${options.apiKey}`

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' })
      res.end(errorBody(String(error), 'server_error'))
    })
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req)
    const receivedAt = performance.now()
    if (!authorized(req.headers)) return send(res, 401, errorBody('Incorrect API key provided', 'invalid_request_error', 'invalid_api_key'))
    if (req.method === 'GET' && req.url === '/v1/models') {
      return send(res, 200, JSON.stringify({ object: 'list', data: [{ id: 'whisper-1', object: 'model', created: 0, owned_by: 'fake' }] }))
    }
    if (req.method === 'POST' && req.url === '/v1/audio/transcriptions') return transcription(req, res, body, receivedAt)
    if (req.method === 'POST' && req.url === '/v1/audio/speech') return speech(req, res, body, receivedAt)
    send(res, 404, errorBody(`Unknown request URL: ${req.method} ${req.url}`))
  }

  async function transcription(req: IncomingMessage, res: ServerResponse, body: Buffer, receivedAt: number): Promise<void> {
    const whisperCpp = options.flavor === 'whisper.cpp'
    const fail = (status: number, openAiBody: string) => {
      const answer = whisperCpp
        ? whisperCppError(status, 'failed to read audio data')
        : { status, type: 'application/json', body: openAiBody }
      send(res, answer.status, answer.body, answer.type)
    }
    const boundary = boundaryOf(req.headers['content-type'])
    if (boundary === undefined) return send(res, 400, errorBody('expected multipart/form-data'))
    let record: TranscriptionRecord
    try {
      const parts = parseMultipart(body, boundary)
      const file = parts.find((p) => p.name === 'file')
      if (file?.filename === undefined)
        return fail(400, errorBody("you must provide a 'file' field with a filename", 'invalid_request_error', 'missing_file'))
      const fields: Record<string, string> = {}
      const order: string[] = []
      for (const p of parts) {
        order.push(p.name)
        if (p !== file) fields[p.name] = p.data.toString('utf8')
      }
      if (!fields.model && !whisperCpp) return send(res, 400, errorBody("you must provide a 'model' parameter"))
      const format = fields.response_format ?? 'json'
      if (!fake.formats.includes(format) && !whisperCpp) return send(res, 400, errorBody(`response_format ${format} is not supported`))
      const wav = readWav(file.data)
      if (wav.channels !== 1) return send(res, 400, errorBody('expected mono audio'))
      record = {
        headers: req.headers,
        fields,
        order,
        filename: file.filename,
        fileType: file.contentType ?? '',
        wav,
        at: Date.now(),
        receivedAt,
      }
    } catch (error) {
      return fail(400, errorBody(`could not read the form: ${(error as Error).message}`))
    }
    fake.transcriptions.push(record)
    res.once('finish', () => {
      record.writtenAt = performance.now()
    })
    const script = fake.transcribe(record)
    if (script.hang) return
    if (script.delayMs) await sleep(script.delayMs)
    if (script.status !== undefined) return fail(script.status, errorBody(`scripted failure ${script.status}`, 'server_error'))
    if (script.raw !== undefined) return send(res, 200, script.raw, 'text/html')
    const text = script.text ?? ''
    const duration = record.wav.samples.length / record.wav.sampleRate
    if (whisperCpp) {
      const answer = whisperCppTranscription(
        record.fields.response_format ?? 'json',
        text,
        script.words ?? spread(text, record.wav),
        duration,
      )
      return send(res, answer.status, answer.body, answer.type)
    }
    if (record.fields.stream === 'true') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      const deltas = script.deltas ?? text.split(/(?<= )/)
      for (const delta of deltas) {
        res.write(`data: ${JSON.stringify({ type: 'transcript.text.delta', delta })}\n\n`)
        await sleep(script.deltaMs ?? 5)
      }
      res.end(`data: ${JSON.stringify({ type: 'transcript.text.done', text })}\n\n`)
      return
    }
    if (record.fields.response_format === 'verbose_json') {
      const words = script.words ?? spread(text, record.wav)
      const granular = record.fields['timestamp_granularities[]'] === 'word'
      return send(
        res,
        200,
        JSON.stringify({
          task: 'transcribe',
          language: 'english',
          duration,
          text,
          ...(granular && { words }),
          segments: [
            {
              id: 0,
              seek: 0,
              start: 0,
              end: duration,
              text,
              tokens: [],
              temperature: 0,
              avg_logprob: -0.2,
              compression_ratio: 1,
              no_speech_prob: 0.01,
            },
          ],
        }),
      )
    }
    if (record.fields.response_format === 'text') return send(res, 200, text, 'text/plain')
    send(res, 200, JSON.stringify({ text }))
  }

  async function speech(req: IncomingMessage, res: ServerResponse, body: Buffer, receivedAt: number): Promise<void> {
    let json: Record<string, unknown>
    try {
      json = JSON.parse(body.toString('utf8')) as Record<string, unknown>
    } catch {
      return send(res, 400, errorBody('the body is not JSON'))
    }
    if (typeof json.input !== 'string' || typeof json.model !== 'string' || typeof json.voice !== 'string') {
      return send(res, 400, errorBody("'model', 'input' and 'voice' are required"))
    }
    const format = json.response_format ?? 'mp3'
    if (format !== 'pcm' && format !== 'wav') return send(res, 400, errorBody(`this fake speaks pcm and wav, not ${String(format)}`))
    const record: SpeechRecord = { headers: req.headers, json, at: Date.now(), receivedAt, aborted: false }
    fake.speech.push(record)
    if (fake.speechStatus !== undefined) return send(res, fake.speechStatus, errorBody('scripted speech failure', 'server_error'))
    res.on('close', () => {
      if (!res.writableFinished) record.aborted = true
    })
    if (options.firstByteMs) await sleep(options.firstByteMs)
    res.writeHead(200, { 'content-type': format === 'pcm' ? 'audio/pcm' : 'audio/wav', 'transfer-encoding': 'chunked' })
    const samples = Math.round(((options.msPerChar ?? 10) * json.input.length * 24000) / 1000)
    const audio = speechAudio(samples)
    if (format === 'wav') res.write(streamingWavHeader(24000))
    const chunk = Math.round(((options.chunkMs ?? 100) * 24000) / 1000) * 2
    for (let at = 0; at < audio.length && !record.aborted; at += chunk) {
      res.write(audio.subarray(at, at + chunk))
      record.firstByteAt ??= performance.now()
      await sleep(options.chunkIntervalMs ?? 5)
    }
    res.end()
  }

  const wss = new WebSocketServer({ noServer: true })
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://fake')
    if (url.pathname !== '/v1/realtime') {
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n')
      return
    }
    if (!authorized(req.headers)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\n\r\n')
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws)
      ws.on('close', () => sockets.delete(ws))
      fake.realtime.push(
        serveRealtime(ws, url.searchParams.get('intent') === 'transcription' ? 'openai' : 'vllm', req.headers, (audio, record) =>
          fake.realtimeText(audio, record),
        ),
      )
    })
  })

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  return fake
}

function send(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type })
  res.end(body)
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  return Buffer.concat(chunks)
}

/** Above this a sample is voiced (the same level the Deepgram fake times its words by). */
export const VOICED_LEVEL = 2000

/**
 * The text's words spread evenly over the voiced part of the file (first to last sample above
 * {@link VOICED_LEVEL}), as a recognizer places words where the speech is; over the whole file when nothing is voiced.
 */
function spread(text: string, wav: { sampleRate: number; samples: Int16Array }) {
  let first = -1
  let last = -1
  wav.samples.forEach((x, i) => {
    if (Math.abs(x) <= VOICED_LEVEL) return
    if (first < 0) first = i
    last = i
  })
  const from = first < 0 ? 0 : first / wav.sampleRate
  const to = first < 0 ? wav.samples.length / wav.sampleRate : (last + 1) / wav.sampleRate
  const words = text.split(/\s+/).filter(Boolean)
  const each = (to - from) / Math.max(1, words.length)
  return words.map((word, i) => ({ word, start: +(from + i * each).toFixed(4), end: +(from + (i + 1) * each).toFixed(4) }))
}

/** PCM16 LE of a 440 Hz tone: audible, easy to tell from silence. */
function speechAudio(samples: number): Buffer {
  const out = Buffer.alloc(samples * 2)
  for (let i = 0; i < samples; i++) out.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 24000)), i * 2)
  return out
}

function streamingWavHeader(rate: number): Buffer {
  const h = Buffer.alloc(44)
  h.write('RIFF', 0, 'latin1')
  h.writeUInt32LE(0xffffffff, 4)
  h.write('WAVEfmt ', 8, 'latin1')
  h.writeUInt32LE(16, 16)
  h.writeUInt16LE(1, 20)
  h.writeUInt16LE(1, 22)
  h.writeUInt32LE(rate, 24)
  h.writeUInt32LE(rate * 2, 28)
  h.writeUInt16LE(2, 32)
  h.writeUInt16LE(16, 34)
  h.write('data', 36, 'latin1')
  h.writeUInt32LE(0xffffffff, 40)
  return h
}
