/** A real HTTP server on port 0 that records webhook requests and answers as a test scripts it. */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ReceivedRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  raw: string
  json: any
  at: number
}

export interface WebhookReceiver {
  url: string
  requests: ReceivedRequest[]
  /** Decides the reply; default 200 `{}`. */
  respond: (req: ReceivedRequest, res: ServerResponse) => void | Promise<void>
  waitFor(pred: (r: ReceivedRequest) => boolean, timeoutMs?: number): Promise<ReceivedRequest>
  close(): Promise<void>
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = []
  const waiters: { pred: (r: ReceivedRequest) => boolean; resolve: (r: ReceivedRequest) => void }[] = []
  const receiver: WebhookReceiver = {
    url: '',
    requests,
    respond: (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{}')
    },
    waitFor(pred, timeoutMs = 10_000) {
      const found = requests.find(pred)
      if (found) return Promise.resolve(found)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('timed out waiting for a webhook request')), timeoutMs)
        waiters.push({
          pred,
          resolve: (r) => {
            clearTimeout(timer)
            resolve(r)
          },
        })
      })
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      let json: unknown
      try {
        json = JSON.parse(raw)
      } catch {
        json = undefined
      }
      const r: ReceivedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, json, at: Date.now() }
      requests.push(r)
      for (const w of [...waiters]) {
        if (w.pred(r)) {
          waiters.splice(waiters.indexOf(w), 1)
          w.resolve(r)
        }
      }
      void receiver.respond(r, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return receiver
}
