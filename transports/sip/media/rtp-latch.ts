/**
 * Symmetric RTP (for callers behind NAT) for one stream: until a packet comes we send to the SDP's address; the
 * first good RTP packet from the SDP's address or the signalling peer's address latches the stream to where it
 * came from (its port may differ: NAT), and from then on we send there and take packets from there alone. Packets
 * from any other address never latch, so a stranger who guesses the port can neither inject audio nor steal the
 * stream. The stream decides what a good packet is (with SRTP: one that authenticated).
 */
import type { ConnectedPeer } from './connected-peer.js'

interface Address {
  readonly address: string
  readonly port: number
}

export class RtpLatch {
  /** The addresses whose packets may latch the stream (also RTCP's). */
  readonly latchable: ReadonlySet<string>
  readonly #out: ConnectedPeer
  #peer: Address
  #latched = false

  /** `remote`: the SDP's address; `out`: the stream's sends, connected to the peer once latched. */
  constructor(remote: Address, signallingAddress: string, out: ConnectedPeer) {
    this.#peer = { address: remote.address, port: remote.port }
    this.latchable = new Set([unmapped(remote.address), unmapped(signallingAddress)])
    this.#out = out
  }

  /** Where packets go now (the latched source, else the SDP's address). */
  get peer(): Address {
    return this.#peer
  }

  get latched(): boolean {
    return this.#latched
  }

  /** Whether a packet from `from` may be looked at: the latched source, or before latching one that may latch. */
  admits(from: Address): boolean {
    if (this.#latched) return from.address === this.#peer.address && from.port === this.#peer.port
    return this.latchable.has(unmapped(from.address))
  }

  /** A good packet came from `from` (admitted): the first one latches the stream there. */
  heard(from: Address): void {
    if (this.#latched) return
    this.#latched = true
    this.#peer = { address: from.address, port: from.port }
    this.#out.latch(this.#peer)
  }

  /** The SDP moved the peer: unlatched, sends go to the new address until a packet latches again. */
  moveTo(remote: Address): void {
    this.#peer = { address: remote.address, port: remote.port }
    this.#latched = false
    this.#out.latch(undefined)
  }
}

/** `::ffff:a.b.c.d` (a dual-stack socket) is the IPv4 address it carries. */
function unmapped(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address
}
