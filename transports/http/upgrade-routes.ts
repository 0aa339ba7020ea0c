import type { IncomingMessage, Server } from 'node:http'
import type { Duplex } from 'node:stream'
import { maskKeyInPath, type Log } from '../../core/log.js'
import { refuseUpgrade } from './upgrade-refusal.js'

/**
 * One WebSocket endpoint of the server (a transport, the tunnel): the paths it takes and what it does with an
 * upgrade there. Each transport's folder exports a function that makes its route, so the wiring mounts a new
 * transport with one more entry in its list.
 */
export interface UpgradeRoute {
  /** Whether an upgrade to `pathname` is this endpoint's. */
  matches(pathname: string): boolean
  /** Answers the upgrade: completes it or refuses it with an HTTP status. */
  handle(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void>
}

/** Sends each upgrade of `server` to the first route that matches its path; any other path is refused with 404. */
export function mountUpgrades(server: Server, routes: readonly UpgradeRoute[], log: Log): void {
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined)
    const url = new URL(req.url ?? '/', 'http://gateway.invalid')
    const route = routes.find((r) => r.matches(url.pathname))
    if (route !== undefined) {
      void route.handle(req, socket, head, url)
      return
    }
    log.debug({ path: maskKeyInPath(url.pathname) }, 'upgrade to unknown path refused')
    refuseUpgrade(socket, 404, `no WebSocket endpoint at ${maskKeyInPath(url.pathname)}`)
  })
}
