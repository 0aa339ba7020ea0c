import { createHmac } from 'node:crypto'
import { HmacSha1 } from '../transports/sip/media/srtp/hmac-sha1.js'
import { SrtpContext } from '../transports/sip/media/srtp/srtp-context.js'
import { encodeRtp } from '../transports/sip/media/rtp-codec.js'
import { fmt, throughput, type BenchOptions, type BenchRow } from './bench-util.js'

/**
 * SRTP's per-packet cost on the audio hot path: one 20 ms G.711 packet (172 octets) protected and
 * unprotected, per suite, in CPU microseconds; and what 50 packets a second each way cost a call, as a share of one
 * core. Beside them, the packet's HMAC-SHA1 tag alone (the packet and its ROC: 176 octets) from SRTP's own HMAC and
 * from Node's `createHmac`, the choice hmac-sha1.ts explains.
 */
export async function bench({ repeats }: BenchOptions): Promise<BenchRow[]> {
  const rows: BenchRow[] = []
  for (const suite of ['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32'] as const) {
    const key = Buffer.alloc(16, 1)
    const salt = Buffer.alloc(14, 2)
    const tx = new SrtpContext(suite, key, salt)
    let seq = 0
    // The payload exists before the packet, as the pacer's frame does in the gateway: the packet is built around it,
    // with room for the tag, and sealed where it lies (what the gateway's media does for each packet it sends).
    const payload = Buffer.alloc(160, 0xff)
    const rtp = (room: number) =>
      encodeRtp({ payloadType: 0, sequence: seq & 0xffff, timestamp: seq * 160, ssrc: 0x1234, payload }, 0x1234, room)
    const plain = () => rtp(0)
    const protect = await throughput(
      1,
      () => {
        seq++
        return tx.protectRtpInPlace(rtp(tx.rtpOverhead))
      },
      { repeats, minMs: 200 },
    )
    // Unprotect needs a fresh packet each time (a replay would be refused): one batch, made beforehand, and a fresh
    // receiver each time through it (its set-up spread over the batch's packets). The gateway decrypts a datagram in
    // place; here each packet is first copied out of the batch (as a datagram arrives in a buffer of its own), and
    // that copy is counted too.
    // A sender of its own, from sequence 1: a fresh receiver takes the first packet's rollover counter as 0.
    const batchSender = new SrtpContext(suite, key, salt)
    seq = 0
    const batch = Array.from({ length: 20_000 }, () => {
      seq++
      return batchSender.protectRtp(plain())
    })
    let rx = new SrtpContext(suite, key, salt)
    let next = 0
    const unprotect = await throughput(
      1,
      () => {
        if (next === batch.length) {
          rx = new SrtpContext(suite, key, salt)
          next = 0
        }
        const clear = rx.unprotectRtp(Buffer.from(batch[next++]!), true)
        if (typeof clear === 'string') throw new Error(`the bench's own packet was ${clear}`)
        return clear
      },
      { repeats, minMs: 200 },
    )
    const authKey = Buffer.alloc(20, 3)
    const mac = new HmacSha1(authKey)
    const packet = tx.protectRtp(plain())
    const roc = Buffer.alloc(4)
    const tag = Buffer.alloc(20)
    const ours = await throughput(1, () => mac.tag(packet, 172, roc, tag, 0, 10), { repeats, minMs: 200 })
    const node = await throughput(1, () => createHmac('sha1', authKey).update(packet.subarray(0, 172)).update(roc).digest(), {
      repeats,
      minMs: 200,
    })
    const us = (rate: number) => 1e6 / rate
    const both = us(protect.median) + us(unprotect.median)
    rows.push({
      suite,
      'protect us/packet (median)': fmt(us(protect.median)),
      'unprotect us/packet (median)': fmt(us(unprotect.median)),
      'one call, 50 pkt/s each way: % of a core': fmt((both * 50) / 1e4),
      'tag us (ours)': fmt(us(ours.median)),
      'tag us (createHmac)': fmt(us(node.median)),
    })
  }
  return rows
}
