import type { IncomingMessage } from 'node:http'

/** The caller's IP: the socket peer, or the first X-Forwarded-For hop when a proxy is trusted. */
export function clientIp(req: IncomingMessage, trustProxy: boolean): string | null {
  if (trustProxy) {
    const xff = req.headers['x-forwarded-for']
    const first = (Array.isArray(xff) ? xff[0] : xff)?.split(',')[0]?.trim()
    if (first) return first.slice(0, 64)
  }
  const addr = req.socket.remoteAddress ?? null
  return addr?.startsWith('::ffff:') ? addr.slice(7) : addr
}
