import { WebSocket } from 'ws'

/** Resolves with the close code and reason of `ws` (attach before it can close). */
export function closeInfo(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => {
    ws.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() }))
  })
}

/** Resolves when `ws` has closed or after `timeoutMs`, whichever comes first. */
export function waitForClose(ws: WebSocket, timeoutMs: number): Promise<void> {
  if (ws.readyState === WebSocket.CLOSED) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs)
    ws.once('close', () => {
      clearTimeout(timer)
      resolve()
    })
  })
}

/** HTTP status of a refused upgrade; ws reports it only in the error text (no status property). */
export function upgradeStatus(error: unknown): number | undefined {
  const match = /Unexpected server response: (\d{3})/.exec(errorMessage(error))
  return match ? Number(match[1]) : undefined
}

/** The message of an unknown thrown value. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
