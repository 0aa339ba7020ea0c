import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import type { WebSocket, WebSocketServer } from 'ws'
import type { SessionManager } from '../sessions/session-manager.js'
import type { CallSession, SessionTransport } from '../sessions/call-session.js'
import { OPEN_REFUSALS } from '../sessions/refusals.js'
import type { Log } from '../../core/log.js'
import { clientIp } from './client-ip.js'
import { refuseUpgrade } from './upgrade-refusal.js'

/**
 * Opens a session with a one-time key and only then completes the WebSocket upgrade: the key is consumed (with
 * the concurrency slot) before the `101`, and a refused key gets a plain HTTP error with the SPEC's JSON body.
 * Resolves with the connected session and socket, or undefined when refused or gone.
 */
export async function upgradeToSession(o: {
  wss: WebSocketServer
  req: IncomingMessage
  socket: Duplex
  head: Buffer
  key: string
  transport: SessionTransport
  sessions: SessionManager
  trustProxy: boolean
  log: Log
  /** Names the channel in log lines. */
  channel: 'browser' | 'carrier'
}): Promise<{ session: CallSession; ws: WebSocket } | undefined> {
  if (o.key.length > 200) {
    refuseUpgrade(o.socket, 401, OPEN_REFUSALS.unknown.message)
    return undefined
  }
  let opened: Awaited<ReturnType<SessionManager['open']>>
  try {
    opened = await o.sessions.open(o.key, o.transport, { ipAddress: clientIp(o.req, o.trustProxy), countryCode: null })
  } catch (e) {
    o.log.error({ err: e, channel: o.channel }, 'session open failed')
    refuseUpgrade(o.socket, 500, OPEN_REFUSALS.error.message)
    return undefined
  }
  if (!opened.ok) {
    const r = OPEN_REFUSALS[opened.reason]
    o.log.info({ reason: opened.reason, channel: o.channel }, 'connection refused')
    refuseUpgrade(o.socket, r.status, r.message)
    return undefined
  }
  const session = opened.session
  if (o.socket.destroyed) {
    void session.transportClosed()
    return undefined
  }
  return new Promise((resolve) => {
    o.wss.handleUpgrade(o.req, o.socket, o.head, (ws) => {
      ws.on('error', (e) => o.log.debug({ err: e, session_id: session.id, channel: o.channel }, 'socket error'))
      resolve({ session, ws })
    })
  })
}
