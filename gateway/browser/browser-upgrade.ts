import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer, type WebSocket } from 'ws'
import type { SessionManager } from '../sessions/session-manager.js'
import type { CallSession, EndReason, SessionTransport } from '../sessions/call-session.js'
import { OPEN_REFUSALS } from '../sessions/refusals.js'
import { refuseUpgrade } from '../http/upgrade-refusal.js'
import { clientIp } from '../http/client-ip.js'
import type { Log } from '../log.js'

/** Path of the browser WebSocket (SPEC). */
export const BROWSER_WS_PATH = '/v1/agents/web/websocket'

/** Largest browser frame accepted; a 1 s chunk of 8 kHz PCM16 in base64 is ~21 KiB. */
export const MAX_BROWSER_FRAME_BYTES = 256 * 1024

/** Attaches a connected browser socket to its session; the message protocol is handled by the transport. */
export type BrowserAttach = (ws: WebSocket, session: CallSession, transport: BrowserSocketTransport) => void

/** The socket side of a browser session: closing it ends the session and vice versa. */
export class BrowserSocketTransport implements SessionTransport {
  readonly kind = 'browser' as const
  ws: WebSocket | undefined
  close(reason: EndReason): void {
    const ws = this.ws
    if (ws === undefined) return
    // 1000 for a normal end, 1001 when the gateway goes away; the reason says which timeout or hangup.
    ws.close(reason === 'shutdown' ? 1001 : 1000, reason)
  }
}

/**
 * Handles upgrades on the browser path: the key is checked and consumed (with the concurrency slot) before
 * the upgrade completes; a refused key gets a plain HTTP error with a JSON body and no WebSocket.
 */
export function browserUpgradeHandler(deps: { sessions: SessionManager; log: Log; trustProxy: boolean; attach: BrowserAttach }) {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_BROWSER_FRAME_BYTES, perMessageDeflate: false })
  return async (req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> => {
    const key = url.searchParams.get('client_session_key')
    if (!key) return refuseUpgrade(socket, 400, 'missing client_session_key query parameter')
    if (key.length > 200) return refuseUpgrade(socket, 401, OPEN_REFUSALS.unknown.message)
    const transport = new BrowserSocketTransport()
    let opened
    try {
      opened = await deps.sessions.open(key, transport, { ipAddress: clientIp(req, deps.trustProxy), countryCode: null })
    } catch (e) {
      deps.log.error({ err: e }, 'browser session open failed')
      return refuseUpgrade(socket, 500, OPEN_REFUSALS.error.message)
    }
    if (!opened.ok) {
      const r = OPEN_REFUSALS[opened.reason]
      deps.log.info({ reason: opened.reason }, 'browser connection refused')
      return refuseUpgrade(socket, r.status, r.message)
    }
    const session = opened.session
    if (socket.destroyed) {
      void session.transportClosed()
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      transport.ws = ws
      ws.on('close', () => void session.transportClosed())
      ws.on('error', (e) => deps.log.debug({ err: e, session_id: session.id }, 'browser socket error'))
      if (session.isEnded) ws.close(1000, 'session ended')
      deps.attach(ws, session, transport)
    })
  }
}
