import type { Duplex } from 'node:stream'
import { STATUS_CODES } from 'node:http'

/**
 * Refuses a WebSocket upgrade with an HTTP status and the SPEC's JSON error body, then closes the socket.
 * `retryAfterSeconds` adds `Retry-After`: the refusal passes with time or on another replica.
 */
export function refuseUpgrade(socket: Duplex, status: number, message: string, retryAfterSeconds?: number): void {
  const body = JSON.stringify({ error: message })
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      'Connection: close\r\n' +
      (retryAfterSeconds === undefined ? '' : `Retry-After: ${retryAfterSeconds}\r\n`) +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      '\r\n' +
      body,
  )
}
