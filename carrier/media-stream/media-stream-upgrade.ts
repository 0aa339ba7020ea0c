/**
 * Upgrades on `{carrier_ws_url}/v1/agents/carrier/websocket/<key>`: the key is consumed (with the
 * concurrency slot) before the upgrade completes; a refused key gets a plain HTTP error with a JSON body.
 */
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { upgradeToSession } from '../../gateway/http/upgrade-session.js'
import { WebSocketServer } from 'ws'
import { OPEN_REFUSALS } from '../../gateway/sessions/refusals.js'
import { refuseUpgrade } from '../../gateway/http/upgrade-refusal.js'
import { advanceCallStatus } from '../../gateway/store/carrier-calls.js'
import type { CarrierCallStatus } from '../carrier.js'
import type { CarrierContext } from '../gateway/carrier-context.js'
import { MediaStreamTransport } from './media-stream-transport.js'

/** Upgrade handler for media streams; `url` is the parsed request URL. */
export function mediaStreamUpgradeHandler(c: CarrierContext, options: { trustProxy: boolean }) {
  const { pathPrefix, maxFrameBytes } = c.carrier.mediaStream
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxFrameBytes, perMessageDeflate: false })
  return async (req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> => {
    let key: string
    try {
      key = decodeURIComponent(url.pathname.slice(pathPrefix.length))
    } catch {
      return refuseUpgrade(socket, 401, OPEN_REFUSALS.unknown.message)
    }
    if (key === '' || key.includes('/')) return refuseUpgrade(socket, 400, 'missing session key in the stream URL')
    // Set once the key opened the session; `start` always comes after that.
    let sessionId: string | undefined
    let callSid: string | null = null
    const transport = new MediaStreamTransport({
      codec: c.carrier.codec,
      log: c.log,
      frameTiming: c.frameTiming,
      onStart: (start) => {
        const id = sessionId
        if (id === undefined) return
        if (callSid !== null && start.callSid !== callSid) {
          c.log.warn({ session_id: id }, 'carrier stream start names another call sid than the voice hook did')
        }
        advanceCallStatus<CarrierCallStatus>(c.db, id, (current) => c.carrier.nextStatus(current, 'in-progress')).catch((e: unknown) =>
          c.log.warn({ err: e, session_id: id }, 'could not store the call status'),
        )
      },
    })
    const up = await upgradeToSession({
      wss,
      req,
      socket,
      head,
      key,
      transport,
      sessions: c.sessions,
      trustProxy: options.trustProxy,
      log: c.log,
      channel: 'carrier',
    })
    if (up === undefined) return
    const { session, ws } = up
    sessionId = session.id
    callSid = session.row.call_sid
    c.watchdog.settle(session.id)
    transport.attach(ws, session)
    if (session.isEnded) ws.close(1000, 'session ended')
  }
}
