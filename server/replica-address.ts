import type { AddressInfo } from 'node:net'
import { networkInterfaces } from 'node:os'

/**
 * Where other replicas reach this process: its own address, or when it listens on all interfaces the first
 * non-loopback IPv4 address (another machine's 127.0.0.1 is that machine). REPLICA_URL overrides it.
 */
export function replicaAddress(addr: AddressInfo): string {
  let host = addr.address
  if (host === '0.0.0.0' || host === '::') {
    const external = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .find((i) => i.family === 'IPv4' && !i.internal)
    host = external?.address ?? '127.0.0.1'
  }
  return `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`
}
