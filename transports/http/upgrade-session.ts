import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer, type WebSocket } from 'ws'
import type { SessionManager } from '../../gateway/sessions/session-manager.js'
import type { CallSession } from '../../gateway/sessions/call-session.js'
import type { SessionPort, SessionTransport } from '../../gateway/sessions/ports/session-port.js'
import { OPEN_REFUSALS } from './open-refusals.js'
import type { Log } from '../../core/log.js'
import { clientIp } from './client-ip.js'
import { refuseUpgrade } from './upgrade-refusal.js'

/**
 * A transport over one upgraded WebSocket (the browser's, a carrier's media stream): the session drives it as a
 * `SessionTransport`; once the socket is there it drives the session through `SessionPort`, and it tells the
 * session when its socket closes by itself (`transportClosed`).
 */
export interface SocketTransport extends SessionTransport {
  attach(ws: WebSocket, session: SessionPort): void
}

/** A session opened by an upgrade, with its socket. */
export interface UpgradedSession {
  readonly session: CallSession
  readonly ws: WebSocket
}

/** Upgrades one request whose key opens a session carried by `transport`; undefined when refused or gone. */
export type SessionUpgrade = (
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  key: string,
  transport: SocketTransport,
) => Promise<UpgradedSession | undefined>

/** Hands the upgraded socket to its transport; a session that ended meanwhile closes the socket at once. */
export function attachSocket(transport: SocketTransport, { session, ws }: UpgradedSession): void {
  transport.attach(ws, session)
  if (session.isEnded) ws.close(1000, 'session ended')
}

/**
 * A WebSocket endpoint whose upgrades open a session with a one-time key and only then complete: the key is
 * consumed (with the concurrency slot) before the `101`, and a refused key gets a plain HTTP error with the
 * SPEC's JSON body. Each upgrade resolves with the connected session and socket, or undefined.
 */
export function sessionUpgrade(endpoint: {
  sessions: SessionManager
  trustProxy: boolean
  log: Log
  /** Names the channel in log lines. */
  channel: 'browser' | 'carrier'
  /** Largest frame the socket accepts; ws closes it with 1009 beyond. */
  maxPayload: number
}): SessionUpgrade {
  const { sessions, log, channel } = endpoint
  const wss = new WebSocketServer({ noServer: true, maxPayload: endpoint.maxPayload, perMessageDeflate: false })
  return async (req, socket, head, key, transport) => {
    if (key.length > 200) {
      refuseUpgrade(socket, 401, OPEN_REFUSALS.unknown.message)
      return undefined
    }
    let opened: Awaited<ReturnType<SessionManager['open']>>
    try {
      opened = await sessions.open(key, transport, { ipAddress: clientIp(req, endpoint.trustProxy), countryCode: null })
    } catch (e) {
      log.error({ err: e, channel }, 'session open failed')
      refuseUpgrade(socket, 500, OPEN_REFUSALS.error.message)
      return undefined
    }
    if (!opened.ok) {
      const r = OPEN_REFUSALS[opened.reason]
      log.info({ reason: opened.reason, channel }, 'connection refused')
      refuseUpgrade(socket, r.status, r.message, r.retryAfterSeconds)
      return undefined
    }
    const session = opened.session
    if (socket.destroyed) {
      void session.transportClosed()
      return undefined
    }
    return new Promise((resolve) => {
      wss.handleUpgrade(req, socket, head, (ws) => {
        ws.on('error', (e) => log.debug({ err: e, session_id: session.id, channel }, 'socket error'))
        resolve({ session, ws })
      })
    })
  }
}
