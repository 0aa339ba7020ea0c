/**
 * The tunnel's WebSocket protocol between the gateway and `voxgate tunnel` (JSON text frames; bodies base64).
 * Pure: no I/O. The CLI encodes and decodes the same messages.
 *
 * gateway -> CLI: `tunnel.ready`, `request` (a webhook request to replay locally), `request.cancel` (the gateway
 * stopped waiting; its optional `reason` says why: older CLIs ignore it), `tail` (a live session event when asked
 * for), `tunnel.closed` (after `close`).
 * CLI -> gateway: `response.start`, `response.body` (any number, in order), `response.end`, `response.error`
 * (the local server failed), `close` (stop: restore the previous webhook URL and answer `tunnel.closed`).
 */
import { z } from 'zod'

/** Largest frame either side sends or accepts. */
export const TUNNEL_MAX_FRAME_BYTES = 2 * 1024 * 1024
/** Largest response body slice the CLI puts in one `response.body` frame. */
export const TUNNEL_BODY_SLICE_BYTES = 256 * 1024

/** Header pairs in wire order (repeated names allowed). */
export type HeaderPairs = [string, string][]

/**
 * Set by the gateway's own webhook client on requests to its tunnel addresses: when the request was sent (epoch
 * ms), so a cancel can be told apart from the agent step's deadline. Not relayed to the local server.
 */
export const SENT_AT_HEADER = 'x-voxgate-sent-at'

/** Where webhook requests for a tunnel arrive: `<PUBLIC_URL>/tunnel/<tunnel_id><path>`. */
export const TUNNEL_HTTP_PREFIX = '/tunnel/'

/**
 * Why the gateway cancels a relayed request: `timeout` (the agent step's time_to_first_byte_ms or timeout_ms ran
 * out), `shutdown` (the gateway is shutting down), `caller_gone` (the caller stopped waiting: over HTTP a barge-in
 * and an ended call look alike, so both are this).
 */
export type CancelReason = 'caller_gone' | 'timeout' | 'shutdown'

/** The cancel reasons, for decoding one that crossed replicas. */
export const CANCEL_REASONS: readonly CancelReason[] = ['caller_gone', 'timeout', 'shutdown']

/** What the gateway sends. */
export type GatewayMessage =
  | {
      type: 'tunnel.ready'
      tunnel_id: string
      agent_id: string
      webhook_url: string
      previous_webhook_url: string | null
      /** True when a reconnecting CLI got its tunnel (and address) back. */
      resumed?: boolean
    }
  | { type: 'request'; id: string; method: string; path: string; headers: HeaderPairs; body: string }
  | { type: 'request.cancel'; id: string; reason?: CancelReason; detail?: string }
  | {
      type: 'tail'
      event: 'session.started' | 'session.ended' | 'turn.failed'
      session_id: string
      at: string
      detail?: Record<string, unknown>
    }
  | { type: 'tunnel.closed'; restored: boolean; webhook_url: string | null }

const id = z.string().min(1).max(100)
const headerPairs = z.array(z.tuple([z.string().max(256), z.string().max(8192)])).max(100)

const clientMessage = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('response.start'), id, status: z.number().int().min(100).max(599), headers: headerPairs }),
  z.strictObject({ type: z.literal('response.body'), id, data: z.base64() }),
  z.strictObject({ type: z.literal('response.end'), id }),
  z.strictObject({ type: z.literal('response.error'), id, message: z.string().max(1000) }),
  z.strictObject({ type: z.literal('close') }),
])

/** What the CLI sends. */
export type ClientMessage = z.infer<typeof clientMessage>

/** Decodes a CLI frame; `{ ok: false }` with the reason for anything malformed. */
export function decodeClientMessage(text: string): { ok: true; message: ClientMessage } | { ok: false; reason: string } {
  let j: unknown
  try {
    j = JSON.parse(text)
  } catch {
    return { ok: false, reason: 'not JSON' }
  }
  const r = clientMessage.safeParse(j)
  return r.success ? { ok: true, message: r.data } : { ok: false, reason: r.error.issues[0]?.message ?? 'invalid message' }
}

/** Decodes a gateway frame (the CLI's side); undefined for anything it does not know. */
export function decodeGatewayMessage(text: string): GatewayMessage | undefined {
  let j: unknown
  try {
    j = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof j !== 'object' || j === null || typeof (j as { type?: unknown }).type !== 'string') return undefined
  return j as GatewayMessage
}

/** Encodes either side's message. */
export function encodeTunnelMessage(m: GatewayMessage | ClientMessage): string {
  return JSON.stringify(m)
}

/** Request and response headers that belong to one hop and are not relayed. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
])

/** Header pairs without hop-by-hop headers (names lower-cased). */
export function endToEndHeaders(pairs: Iterable<[string, string]>): HeaderPairs {
  const out: HeaderPairs = []
  for (const [name, value] of pairs) {
    const n = name.toLowerCase()
    if (!HOP_BY_HOP.has(n)) out.push([n, value])
  }
  return out
}
