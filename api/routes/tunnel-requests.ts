import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import type { Context } from 'koa'
import { ERRORS } from '../../core/errors.js'
import { readRaw, MAX_BODY_BYTES } from '../http/body.js'
import type { TunnelHub } from '../../gateway/tunnels/tunnel-hub.js'
import type { ResponseSink } from '../../gateway/tunnels/local-tunnel.js'
import { SENT_AT_HEADER, endToEndHeaders } from '../../gateway/tunnels/tunnel-codec.js'
import { TUNNEL_HTTP_PREFIX } from '../../gateway/tunnels/tunnel-upgrade.js'
import { FORWARDED_HEADER } from '../../gateway/tunnels/direct-forward.js'

/** The tunnel address's route, as registered (the API reference lists it). */
export const TUNNEL_REQUEST_ROUTE = '/tunnel/:tunnel_id/{*rest}'

/**
 * `POST <PUBLIC_URL>/tunnel/<tunnel_id>/<path>`: the agent's webhook while `voxgate tunnel` runs. The request
 * (headers, body of at most 1 MiB) is relayed to the developer's machine and the response streamed back as it
 * comes (an SSE reply event by event). Not behind the API key: the gateway signs what it sends here and the
 * local server checks `service-signature`; the tunnel id (96 random bits) is the address.
 */
export function tunnelRequestsRouter(deps: { hub: TunnelHub }): Router {
  const r = newRouter()
  r.post(TUNNEL_REQUEST_ROUTE, async (ctx) => {
    const tunnelId = ctx.params.tunnel_id as string
    const body = await readRaw(ctx, MAX_BODY_BYTES)
    const rest = ctx.path.slice(TUNNEL_HTTP_PREFIX.length + tunnelId.length) || '/'
    const path = `${rest}${ctx.querystring === '' ? '' : `?${ctx.querystring}`}`
    const forwarded = ctx.get(FORWARDED_HEADER) !== ''
    const headers = endToEndHeaders(
      Object.entries(ctx.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : v === undefined ? [] : [[k, v]])) as [
        string,
        string,
      ][],
    ).filter(([name]) => name !== FORWARDED_HEADER && name !== SENT_AT_HEADER)
    const sentAt = Number(ctx.get(SENT_AT_HEADER))
    const abort = new AbortController()
    // The response's close (not the request's, which fires once the body is read) tells a caller that went away.
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) abort.abort()
    })
    ctx.respond = false
    const req = { method: ctx.method, path, headers, body, sentAt: Number.isSafeInteger(sentAt) && sentAt > 0 ? sentAt : undefined }
    await deps.hub.relay(tunnelId, req, httpSink(ctx), abort.signal, { forwarded })
  })
  return r
}

/** Writes a relayed response to the HTTP response as it arrives (headers within a turn of the event loop, each chunk at once). */
function httpSink(ctx: Context): ResponseSink {
  const res = ctx.res
  return {
    start(status, headers) {
      if (res.headersSent) return
      for (const [name, value] of endToEndHeaders(headers)) res.appendHeader(name, value)
      res.writeHead(status)
      // The first body chunk usually arrives in the same read: then the headers leave with it, in one packet.
      setImmediate(() => {
        if (!res.headersSent && !res.destroyed) res.flushHeaders()
      })
    },
    body(chunk) {
      res.write(chunk)
    },
    end() {
      res.end()
    },
    fail(code, message) {
      if (res.headersSent) {
        // Mid-stream: the caller sees a truncated response (the connection is cut, not ended cleanly).
        res.destroy()
        return
      }
      const body = JSON.stringify({ error: message, code })
      res.writeHead(ERRORS[code].status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
      res.end(body)
    },
  }
}
