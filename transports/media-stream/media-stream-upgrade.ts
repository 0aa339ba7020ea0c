/**
 * Upgrades on `{carrier_ws_url}<the carrier's stream path><key>`: the key is consumed (with the concurrency
 * slot) before the upgrade completes; a refused key gets a plain HTTP error with a JSON body.
 */
import { attachSocket, sessionUpgrade } from '../http/upgrade-session.js'
import type { UpgradeRoute } from '../http/upgrade-routes.js'
import { OPEN_REFUSALS } from '../http/open-refusals.js'
import { refuseUpgrade } from '../http/upgrade-refusal.js'
import type { CallDeps } from '../../gateway/admission/call-deps.js'
import { callStreamConnected, callStreamStarted } from '../../gateway/admission/call-progress.js'
import type { Carrier } from '../../carrier/carrier.js'
import { MediaStreamTransport } from './media-stream-transport.js'
import { WebSocketServer } from 'ws'
import { LEG_RELAYED_HEADER, TRANSFER_LEG_KEY_PREFIX } from '../../gateway/transfer/transfer-legs.js'
import { attachTransferLeg } from './transfer-leg-socket.js'
import { type LegRelays, relayTransferLeg } from './transfer-leg-relay.js'

/** What the media-stream upgrade needs. */
export interface MediaStreamUpgradeDeps {
  readonly carrier: Pick<Carrier, 'mediaStream' | 'newCodec'>
  /** The process's carrier calls: its sessions and log, the waiting-call deadlines, how statuses move. */
  readonly calls: Pick<CallDeps, 'db' | 'log' | 'carrier' | 'sessions' | 'watchdog' | 'transferLegs'>
  readonly trustProxy: boolean
  /** The legs this process relays to the replica waiting for them; absent: a leg held elsewhere is refused. */
  readonly relays?: LegRelays | undefined
  /** Measures the synchronous handling of each inbound frame in ms (benchmarks). */
  readonly frameTiming?: ((ms: number) => void) | undefined
}

/** The media-stream path: every upgrade under the carrier's stream path prefix. */
export function mediaStreamUpgradeRoute(deps: MediaStreamUpgradeDeps): UpgradeRoute {
  const { calls } = deps
  const { pathPrefix, maxFrameBytes } = deps.carrier.mediaStream
  const upgrade = sessionUpgrade({
    sessions: calls.sessions,
    trustProxy: deps.trustProxy,
    log: calls.log,
    channel: 'carrier',
    maxPayload: maxFrameBytes,
  })
  const legSockets = new WebSocketServer({ noServer: true, maxPayload: maxFrameBytes, perMessageDeflate: false })
  return {
    matches: (pathname) => pathname.startsWith(pathPrefix),
    async handle(req, socket, head, url) {
      let key: string
      try {
        key = decodeURIComponent(url.pathname.slice(pathPrefix.length))
      } catch {
        return refuseUpgrade(socket, 401, OPEN_REFUSALS.unknown.message)
      }
      if (key === '' || key.includes('/')) return refuseUpgrade(socket, 400, 'missing session key in the stream URL')
      if (key.startsWith(TRANSFER_LEG_KEY_PREFIX)) {
        // A warm transfer's human leg: no session is opened for it.
        const leg = calls.transferLegs?.get(key)
        if (leg === undefined) {
          // Another replica may be waiting for it (a balancer sent the carrier here): relayed there, once.
          const relayed = req.headers[LEG_RELAYED_HEADER] !== undefined
          const elsewhere =
            relayed || deps.relays === undefined
              ? undefined
              : await calls.transferLegs?.replicaOf(key).catch((err: unknown) => {
                  calls.log.warn({ err }, 'transfer leg lookup failed: its stream is refused')
                  return undefined
                })
          if (elsewhere === undefined || deps.relays === undefined) return refuseUpgrade(socket, 401, OPEN_REFUSALS.unknown.message)
          return relayTransferLeg({ sockets: legSockets, relays: deps.relays, log: calls.log }, elsewhere, url.pathname, req, socket, head)
        }
        legSockets.handleUpgrade(req, socket, head, (ws) => {
          ws.on('error', (e) => calls.log.debug({ err: e }, 'transfer leg socket error'))
          attachTransferLeg(ws, leg, deps.carrier.newCodec(), calls.log)
        })
        return
      }
      // Set once the key opened the session; `start` always comes after that.
      let sessionId: string | undefined
      let callSid: string | null = null
      const transport = new MediaStreamTransport({
        codec: deps.carrier.newCodec(),
        log: calls.log,
        frameTiming: deps.frameTiming,
        onStart: (start) => {
          const id = sessionId
          if (id === undefined) return
          if (callSid !== null && start.callSid !== callSid) {
            calls.log.warn({ session_id: id }, 'carrier stream start names another call sid than the voice hook did')
          }
          void callStreamStarted(calls, id)
        },
      })
      const up = await upgrade(req, socket, head, key, transport)
      if (up === undefined) return
      sessionId = up.session.id
      callSid = up.session.row.call_sid
      callStreamConnected(calls, up.session.id)
      attachSocket(transport, up)
    },
  }
}
