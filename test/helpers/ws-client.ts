/** Opens the browser WebSocket with a key; resolves with the socket or the refusal status, body and Retry-After. */
import WebSocket from 'ws'

export type WsResult = { ok: true; ws: WebSocket } | { ok: false; status: number; body: any; retryAfter: string | undefined }

export function connectBrowser(baseUrl: string, key: string | undefined): Promise<WsResult> {
  const url = `${baseUrl.replace(/^http/, 'ws')}/v1/agents/web/websocket${key === undefined ? '' : `?client_session_key=${encodeURIComponent(key)}`}`
  return new Promise((resolve) => {
    const ws = new WebSocket(url)
    ws.once('open', () => resolve({ ok: true, ws }))
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let body: unknown
        try {
          body = JSON.parse(text)
        } catch {
          body = text
        }
        const retryAfter = res.headers['retry-after']
        resolve({ ok: false, status: res.statusCode ?? 0, body, retryAfter })
      })
    })
    ws.once('error', () => undefined)
  })
}

/** Resolves with the close code and reason when the socket closes. */
export function closed(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })))
}

/** A browser session on the real WebSocket that records every message with its arrival time. */
export interface BrowserSession {
  ws: WebSocket
  /** When the socket opened (ms since the epoch). */
  openedAt: number
  /** Every message received, in order, with its arrival time. */
  received: { at: number; m: any }[]
  /** Every message received, in order. */
  readonly messages: any[]
  send(message: unknown): void
  /** The types of the messages received so far. */
  types(): string[]
  /** The first message, received or to come, that `pred` accepts; rejects after `timeoutMs` naming what came. */
  waitFor(pred: (m: any) => boolean, timeoutMs?: number): Promise<{ at: number; m: any }>
  close(): void
}

/** What a test's browser does besides listening. */
export interface BrowserSessionOptions {
  /** Send `client.ready` once open, as the SDK does when it can play audio (default true). */
  ready?: boolean
  /** Report the assistant's audio as played at the end of each assistant turn, as the SDK does (default false). */
  acknowledgePlayback?: boolean
}

/**
 * Opens a browser session with a client session key. It listens before the socket opens, as the welcome may
 * arrive with the upgrade; a refused upgrade rejects with the status.
 */
export async function openBrowserSession(baseUrl: string, key: string, options: BrowserSessionOptions = {}): Promise<BrowserSession> {
  const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/v1/agents/web/websocket?client_session_key=${encodeURIComponent(key)}`)
  const received: { at: number; m: any }[] = []
  const waiters = new Set<() => void>()
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString())
    received.push({ at: Date.now(), m })
    if (options.acknowledgePlayback && m.type === 'turn.end' && m.role === 'assistant') {
      ws.send(JSON.stringify({ type: 'trigger.response.audio.replay_finished', reason: 'completed', turn_id: m.turn_id }))
    }
    for (const wake of waiters) wake()
  })
  await new Promise((resolve, reject) => {
    ws.once('open', resolve)
    ws.once('unexpected-response', (_req, res) => reject(new Error(`refused ${res.statusCode}`)))
    ws.once('error', reject)
  })
  const openedAt = Date.now()
  if (options.ready ?? true) ws.send(JSON.stringify({ type: 'client.ready' }))
  const types = () => received.map((x) => x.m.type as string)
  return {
    ws,
    openedAt,
    received,
    get messages() {
      return received.map((x) => x.m)
    },
    send: (m) => ws.send(JSON.stringify(m)),
    types,
    waitFor(pred, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = received.find((x) => pred(x.m))
          if (found === undefined) return
          done()
          resolve(found)
        }
        const timer = setTimeout(() => {
          done()
          reject(new Error(`timed out; got ${JSON.stringify(types())}`))
        }, timeoutMs)
        const done = () => {
          clearTimeout(timer)
          waiters.delete(check)
        }
        waiters.add(check)
        check()
      })
    },
    close: () => ws.close(),
  }
}
