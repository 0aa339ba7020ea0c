/**
 * A webhook request for a tunnel held by another replica, sent straight to that replica's tunnel address over
 * HTTP (its `REPLICA_URL`), the response streamed back as it comes. Marked as forwarded, so the holder serves it
 * itself or through the notification channel, never forwards it again.
 */
import { Agent, request } from 'undici'
import type { RelayRequest, ResponseSink } from './local-tunnel.js'
import { SENT_AT_HEADER, TUNNEL_HTTP_PREFIX, type HeaderPairs } from './tunnel-codec.js'

/** Set on a forwarded request; its receiver does not forward it again. */
export const FORWARDED_HEADER = 'x-voxgate-tunnel-forwarded'

/** Replicas are on one network: a connection that does not open at once means the direct path is not there. */
const dispatcher = new Agent({ connect: { timeout: 1_000 }, keepAliveTimeout: 30_000 })

/**
 * Forwards `req` to `holderUrl`; true once the holder answered (the sink has its response), false when it could
 * not be reached (nothing was told to the sink: the caller falls back to the notification channel).
 */
export async function forwardToHolder(
  holderUrl: string,
  tunnelId: string,
  req: RelayRequest,
  sink: ResponseSink,
  signal: AbortSignal,
): Promise<boolean> {
  let res: Awaited<ReturnType<typeof request>>
  try {
    res = await request(`${holderUrl}${TUNNEL_HTTP_PREFIX}${tunnelId}${req.path}`, {
      method: req.method as 'POST',
      headers: [...req.headers.flat(), FORWARDED_HEADER, '1', ...(req.sentAt === undefined ? [] : [SENT_AT_HEADER, String(req.sentAt)])],
      body: req.body,
      signal,
      dispatcher,
    })
  } catch {
    return false
  }
  const headers: HeaderPairs = []
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue
    for (const v of Array.isArray(value) ? value : [value]) headers.push([name, v])
  }
  sink.start(res.statusCode, headers)
  try {
    for await (const chunk of res.body) sink.body(chunk as Buffer)
    sink.end()
  } catch (e) {
    if (!signal.aborted) sink.fail('tunnel_unavailable', `the replica holding the tunnel stopped answering: ${(e as Error).message}`)
  }
  return true
}
