import { attachSocket, sessionUpgrade } from '../http/upgrade-session.js'
import type { UpgradeRoute } from '../http/upgrade-routes.js'
import type { WebSocket } from 'ws'
import type { SessionManager } from '../../gateway/sessions/session-manager.js'
import type { CallSession } from '../../gateway/sessions/call-session.js'
import type { BrowserTransportLimits } from './browser-limits.js'
import { BrowserTransport } from './browser-transport.js'
import { refuseUpgrade } from '../http/upgrade-refusal.js'
import type { Log } from '../../core/log.js'

/** Path of the browser WebSocket (SPEC). */
export const BROWSER_WS_PATH = '/v1/agents/web/websocket'

/**
 * Hard limit of one browser frame: ws closes the socket with 1009 beyond it (it cannot skip a frame it has not
 * buffered). Frames between the codec's MAX_TEXT_FRAME_BYTES (64 KiB) and this get an `error` message and are
 * dropped, so only absurd frames cost the connection.
 */
export const MAX_BROWSER_FRAME_BYTES = 1024 * 1024

/** Observes a connected browser socket (tests); the protocol itself is the transport's. */
export type BrowserAttach = (ws: WebSocket, session: CallSession, transport: BrowserTransport) => void

/**
 * The browser path (`BROWSER_WS_PATH`): the key is checked and consumed (with the concurrency slot) before
 * the upgrade completes; a refused key gets a plain HTTP error with a JSON body and no WebSocket.
 */
export function browserUpgradeRoute(deps: {
  sessions: SessionManager
  log: Log
  trustProxy: boolean
  attach?: BrowserAttach
  limits?: BrowserTransportLimits
}): UpgradeRoute {
  const upgrade = sessionUpgrade({ ...deps, channel: 'browser', maxPayload: MAX_BROWSER_FRAME_BYTES })
  return {
    matches: (pathname) => pathname === BROWSER_WS_PATH,
    async handle(req, socket, head, url) {
      const key = url.searchParams.get('client_session_key')
      if (!key) return refuseUpgrade(socket, 400, 'missing client_session_key query parameter')
      // The transport declares its audio formats before the session opens, so the pipeline starts with them.
      const transport = new BrowserTransport(deps.log, deps.limits)
      const up = await upgrade(req, socket, head, key, transport)
      if (up === undefined) return
      attachSocket(transport, up)
      deps.attach?.(up.ws, up.session, transport)
    },
  }
}
