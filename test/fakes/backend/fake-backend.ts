// Follows voxgate's own SPEC (/work/shared/SPEC.md: "Webhook requests from the service to the customer backend",
// "Responses from the customer backend"; as read 2026-11-29) and the signature and SSE notes of
// /work/shared/PROTOCOLS.md ("Customer backend webhooks"). test/fakes-conformance/backend.test.ts replays a reply
// built from the SPEC's event table to the webhook step.
// A customer backend on a real port: records agent webhook requests, checks their signature independently of
// the pipeline code, and answers as each test scripts it (SSE with delays and split chunks, JSON, errors, hangs).
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'

/** One step of a scripted SSE reply. */
export type SseStep =
  /** An event: `data` is JSON-encoded (a string is sent as is); optional `event:`/`id:` lines. */
  | { data: unknown; event?: string; id?: string }
  /** A `:` comment line. */
  | { comment: string }
  /** Bytes written exactly as given (line endings included). */
  | { raw: string }
  /** A pause before the next step. */
  | { delayMs: number }
  /** Break the connection here (no terminating chunk): the stream breaks after it started. */
  | { destroy: true }

/** How the fake answers one request. */
export type BackendReply =
  | {
      kind: 'sse'
      steps: SseStep[]
      /** Line ending of generated lines; default `\n`. */
      eol?: '\n' | '\r\n' | '\r'
      /** Write every step in pieces of this many bytes, each a separate write after a short pause. */
      splitEvery?: number
      /** Keep the response open after the last step (the reply never ends). */
      keepOpen?: boolean
      contentType?: string
      /** Pause before sending the headers. */
      headersDelayMs?: number
    }
  | { kind: 'json'; body: unknown; status?: number; contentType?: string }
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  /** Accept the request and never send a byte. */
  | { kind: 'hang' }
  /** Reset the connection before any response. */
  | { kind: 'reset' }

/** A request the fake received. */
export interface BackendRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  raw: string
  json: any
  /** The `service-signature` header checked with node:crypto against the secret (300 s tolerance). */
  signatureValid: boolean
  /** When the request's headers arrived (`performance.now()`, this process's clock, as the simulated phone's). */
  arrivedAt: number
  /** Resolves when the exchange is over: `finished` (reply sent) or `aborted` (the client went away first). */
  closed: Promise<'finished' | 'aborted'>
  /** When each step of the reply was written (ms since epoch), for latency assertions. */
  writes: number[]
}

/** The running fake. */
export interface FakeBackend {
  url: string
  requests: BackendRequest[]
  /** Decides each reply; default: SSE saying "ok" then response.end for the request's turn. */
  reply: (request: BackendRequest) => BackendReply
  /** The next request (waits for it). */
  request(index: number, timeoutMs?: number): Promise<BackendRequest>
  close(): Promise<void>
}

/** Independent signature check, as a customer backend would write it. */
export function verifySignature(secret: string, raw: string, header: string | undefined, nowMs = Date.now()): boolean {
  const m = /^t=(\d+),v1=([a-f0-9]{64})$/.exec(header ?? '')
  if (m === null) return false
  if (Math.abs(Math.floor(nowMs / 1000) - Number(m[1])) > 300) return false
  const expected = createHmac('sha256', secret).update(`${m[1]}.${raw}`, 'utf8').digest()
  return timingSafeEqual(expected, Buffer.from(m[2] as string, 'hex'))
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function sseLines(step: SseStep, eol: string): string {
  if ('raw' in step) return step.raw
  if ('comment' in step) return `:${step.comment}${eol}`
  if ('delayMs' in step || 'destroy' in step) return ''
  const lines: string[] = []
  if (step.event !== undefined) lines.push(`event: ${step.event}`)
  if (step.id !== undefined) lines.push(`id: ${step.id}`)
  const data = typeof step.data === 'string' ? step.data : JSON.stringify(step.data)
  for (const line of data.split('\n')) lines.push(`data: ${line}`)
  return lines.join(eol) + eol + eol
}

async function writeSse(res: ServerResponse, reply: Extract<BackendReply, { kind: 'sse' }>, writes: number[]) {
  if (reply.headersDelayMs !== undefined) await sleep(reply.headersDelayMs)
  res.writeHead(200, { 'content-type': reply.contentType ?? 'text/event-stream', 'cache-control': 'no-cache' })
  res.flushHeaders()
  const eol = reply.eol ?? '\n'
  for (const step of reply.steps) {
    if (res.destroyed) return
    if ('delayMs' in step) {
      await sleep(step.delayMs)
      continue
    }
    if ('destroy' in step) {
      res.destroy()
      return
    }
    const bytes = Buffer.from(sseLines(step, eol), 'utf8')
    const size = reply.splitEvery ?? bytes.length
    for (let i = 0; i < bytes.length; i += size) {
      if (res.destroyed) return
      res.write(bytes.subarray(i, i + size))
      if (size < bytes.length) await sleep(5)
    }
    writes.push(Date.now())
  }
  if (!reply.keepOpen) res.end()
}

/** Starts the fake on 127.0.0.1, port 0. */
export async function startFakeBackend(options: { secret: string; path?: string; port?: number }): Promise<FakeBackend> {
  const requests: BackendRequest[] = []
  const waiters: Array<() => void> = []
  const server = createServer((req, res) => {
    const arrivedAt = performance.now()
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      let json: unknown
      try {
        json = JSON.parse(raw)
      } catch {
        json = undefined
      }
      const closed = new Promise<'finished' | 'aborted'>((resolve) => {
        res.on('close', () => resolve(res.writableFinished ? 'finished' : 'aborted'))
      })
      const header = req.headers['service-signature']
      const record: BackendRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        raw,
        json,
        signatureValid: verifySignature(options.secret, raw, typeof header === 'string' ? header : undefined),
        arrivedAt,
        closed,
        writes: [],
      }
      requests.push(record)
      for (const wake of waiters.splice(0)) wake()
      const reply = backend.reply(record)
      void answer(res, reply, record)
    })
  })

  async function answer(res: ServerResponse, reply: BackendReply, record: BackendRequest): Promise<void> {
    switch (reply.kind) {
      case 'hang':
        return
      case 'reset':
        res.socket?.resetAndDestroy()
        return
      case 'status':
        res.writeHead(reply.status, reply.headers ?? {})
        res.end(reply.body ?? '')
        return
      case 'json': {
        const body = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body)
        res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/json' })
        res.end(body)
        return
      }
      case 'sse':
        await writeSse(res, reply, record.writes)
    }
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const backend: FakeBackend = {
    url: `http://127.0.0.1:${port}${options.path ?? '/api/agent'}`,
    requests,
    reply: (request) => ({
      kind: 'sse',
      steps: [
        { data: { type: 'response.tts', content: 'ok', turn_id: request.json?.turn_id } },
        { data: { type: 'response.end', turn_id: request.json?.turn_id } },
      ],
    }),
    async request(index, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs
      while (requests[index] === undefined) {
        if (Date.now() > deadline) throw new Error(`fake backend: no request #${index}`)
        await new Promise<void>((resolve) => {
          waiters.push(resolve)
          setTimeout(resolve, 50)
        })
      }
      return requests[index] as BackendRequest
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  return backend
}
