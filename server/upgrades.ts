import type { SessionManager } from '../gateway/sessions/session-manager.js'
import type { TunnelHub } from '../gateway/tunnels/tunnel-hub.js'
import { TUNNEL_WS_PATH, tunnelUpgradeHandler } from '../gateway/tunnels/tunnel-upgrade.js'
import type { UpgradeRoute } from '../transports/http/upgrade-routes.js'
import { refuseUpgrade } from '../transports/http/upgrade-refusal.js'
import { browserUpgradeRoute } from '../transports/browser/browser-upgrade.js'
import { mediaStreamUpgradeRoute } from '../transports/media-stream/media-stream-upgrade.js'
import type { LegRelays } from '../transports/media-stream/transfer-leg-relay.js'
import type { CarrierPath } from './carrier-path.js'
import type { GatewayDeps } from './gateway-deps.js'

/**
 * The server's WebSocket endpoints, first match wins: the transports (each folder of transports/ makes its own
 * route) and the tunnel. A new transport is one more entry here.
 */
export function upgradeRoutes(
  deps: GatewayDeps,
  parts: { sessions: SessionManager; path: CarrierPath; tunnels: TunnelHub; legRelays?: LegRelays | undefined },
): UpgradeRoute[] {
  const { config, log } = deps
  const { sessions, path } = parts
  return [
    browserUpgradeRoute({ sessions, log, trustProxy: config.trustProxy, attach: deps.attachBrowser ?? (() => undefined) }),
    tunnelRoute(deps, parts),
    mediaStreamUpgradeRoute({
      carrier: path.carrier,
      calls: path.calls,
      trustProxy: config.trustProxy,
      relays: parts.legRelays,
      frameTiming: deps.carrier?.frameTiming,
    }),
  ]
}

/** `voxgate tunnel`'s endpoint; a failure it did not answer itself gets a 500. */
function tunnelRoute(deps: GatewayDeps, parts: { sessions: SessionManager; tunnels: TunnelHub }): UpgradeRoute {
  const { config, store, log } = deps
  const upgrade = tunnelUpgradeHandler({
    db: store.db,
    hub: parts.tunnels,
    publicUrl: config.publicUrl,
    log,
    isDraining: () => parts.sessions.isDraining,
  })
  return {
    matches: (pathname) => pathname === TUNNEL_WS_PATH,
    handle: (req, socket, head, url) =>
      upgrade(req, socket, head, url).catch((e: unknown) => {
        log.error({ err: e }, 'tunnel upgrade failed')
        refuseUpgrade(socket, 500, 'internal error')
      }),
  }
}
