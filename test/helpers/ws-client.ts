/** Opens the browser WebSocket with a key; resolves with the socket or the refusal status and body. */
import WebSocket from 'ws'

export type WsResult = { ok: true; ws: WebSocket } | { ok: false; status: number; body: any }

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
        resolve({ ok: false, status: res.statusCode ?? 0, body })
      })
    })
    ws.once('error', () => undefined)
  })
}

/** Resolves with the close code and reason when the socket closes. */
export function closed(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })))
}
