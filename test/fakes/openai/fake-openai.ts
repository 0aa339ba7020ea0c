// An OpenAI-compatible chat completions server on a real port: checks the bearer key, records requests and
// streams `chat.completion.chunk` deltas followed by `data: [DONE]`, as the documented wire protocol does.
//
// Follows OpenAI's API reference as read on 2026-11-29 (stored copies): "Create chat completion"
// (platform.openai.com/docs/api-reference/chat/create) with its streaming example, "The chat completion chunk object"
// (platform.openai.com/docs/api-reference/chat/streaming): {id, object: "chat.completion.chunk", created, model,
// system_fingerprint, choices: [{index, delta: {role?, content?}, logprobs, finish_reason}]}, the first delta carrying
// the role and "" content, the last an empty delta with finish_reason "stop", then `data: [DONE]`; errors are
// {error: {message, type, param, code}}. test/fakes-conformance/openai.test.ts replays the example to the adapter.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** How the fake answers one completion request. */
export interface OpenAiScript {
  /** Content deltas, in order. */
  deltas: string[]
  /** Pause before each delta after the first. */
  delayMs?: number
  /** Leave out the final `data: [DONE]`. */
  omitDone?: boolean
  /** Leave out the finish_reason chunk too (a stream cut short). */
  omitFinish?: boolean
  /** Raw SSE text written instead of the generated stream. */
  raw?: string
  /** Accept the request and never answer. */
  hang?: boolean
}

/** A request the fake received. */
export interface OpenAiRequest {
  path: string
  headers: IncomingHttpHeaders
  json: any
  closed: Promise<'finished' | 'aborted'>
}

/** The running fake; its base URL ends in `/v1`. */
export interface FakeOpenAi {
  baseUrl: string
  requests: OpenAiRequest[]
  /** Decides each reply; default: "Hello from the fake model." in word-piece deltas. */
  script: (request: OpenAiRequest) => OpenAiScript
  close(): Promise<void>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function chunk(delta: object, finishReason: string | null): string {
  const body = {
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: 1700000000,
    model: 'fake-model',
    system_fingerprint: 'fp_fake',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  }
  return `data: ${JSON.stringify(body)}\n\n`
}

function refuse(res: ServerResponse, status: number, message: string, type: string, code: string | null): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ error: { message, type, param: null, code } }))
}

/** Starts the fake on 127.0.0.1, port 0, accepting only `apiKey`. */
export async function startFakeOpenAi(options: { apiKey: string }): Promise<FakeOpenAi> {
  const requests: OpenAiRequest[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', async () => {
      let json: unknown
      try {
        json = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        json = undefined
      }
      const closed = new Promise<'finished' | 'aborted'>((resolve) => {
        res.on('close', () => resolve(res.writableFinished ? 'finished' : 'aborted'))
      })
      const record: OpenAiRequest = { path: req.url ?? '', headers: req.headers, json, closed }
      requests.push(record)
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        refuse(res, 404, 'Not found', 'invalid_request_error', 'unknown_url')
        return
      }
      const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]
      if (key !== options.apiKey) {
        const shown = key === undefined ? 'none' : `${key.slice(0, 3)}***${key.slice(-2)}`
        refuse(res, 401, `Incorrect API key provided: ${shown}.`, 'invalid_request_error', 'invalid_api_key')
        return
      }
      const script = fake.script(record)
      if (script.hang) return
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' })
      res.flushHeaders()
      if (script.raw !== undefined) {
        res.end(script.raw)
        return
      }
      res.write(chunk({ role: 'assistant', content: '', refusal: null }, null))
      for (const [i, delta] of script.deltas.entries()) {
        if (i > 0 && script.delayMs) await sleep(script.delayMs)
        if (res.destroyed) return
        res.write(chunk({ content: delta }, null))
      }
      if (!script.omitFinish) res.write(chunk({}, 'stop'))
      if (!script.omitDone) res.write('data: [DONE]\n\n')
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const fake: FakeOpenAi = {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script: () => ({ deltas: ['Hel', 'lo', ' from', ' the', ' fake', ' mo', 'del.'] }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  return fake
}
