/**
 * A carrier callback about a warm transfer's human leg (`?leg=<token>`) that reached a replica other than the one
 * waiting for the leg: passed on, as it came (path, query, body and signature headers), to that replica's direct
 * address, marked so it is not passed on again. The waiting replica checks the signature and answers; its status
 * is the carrier's answer. Signatures cover PUBLIC_URL and the path, which every replica shares.
 */
import { Agent, request } from 'undici'
import type { Context } from 'koa'
import { LEG_RELAYED_HEADER } from '../../gateway/transfer/transfer-legs.js'

/** Replicas are on one network: a connection that does not open at once means the other one is not there. */
const dispatcher = new Agent({ connect: { timeout: 2_000 }, keepAliveTimeout: 30_000 })
/** Longest wait for the waiting replica's answer (it only hands the callback to the transfer). */
const RELAY_TIMEOUT_MS = 5_000
/** Headers of the hop, not of the request. */
const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade'])

/** Passes the callback in `ctx` (its body already read as `raw`) to `replicaUrl`; the status it answered. */
export async function relayLegCallback(ctx: Context, raw: Buffer | string, replicaUrl: string): Promise<number> {
  const headers: string[] = []
  for (const [name, value] of Object.entries(ctx.headers)) {
    if (value === undefined || HOP_HEADERS.has(name)) continue
    for (const v of Array.isArray(value) ? value : [value]) headers.push(name, v)
  }
  headers.push(LEG_RELAYED_HEADER, '1')
  const res = await request(`${replicaUrl}${ctx.originalUrl}`, {
    method: 'POST',
    headers,
    body: raw,
    dispatcher,
    signal: AbortSignal.timeout(RELAY_TIMEOUT_MS),
  })
  await res.body.dump()
  return res.statusCode
}
