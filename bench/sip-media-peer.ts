// The phones of the sip-media benchmark, in a process of their own: one UDP socket per call sending a 20 ms PCMU
// packet every 20 ms to the gateway's RTP port (SRTP-protected with the call's key when one is given), and
// swallowing what comes back. Arguments: a JSON array of { port, key? } (key: 30 octets, hex).
import { createSocket } from 'node:dgram'
import { encodeRtp } from '../transports/sip/media/rtp-codec.js'
import { SrtpContext } from '../transports/sip/media/srtp/srtp-context.js'

const calls = JSON.parse(process.argv[2] ?? '[]') as { port: number; key?: string }[]
const payload = Buffer.alloc(160, 0x7f)
const phones = calls.map(({ port, key }, i) => {
  const socket = createSocket('udp4')
  socket.bind(0, '127.0.0.1')
  socket.on('message', () => undefined)
  const bytes = key === undefined ? undefined : Buffer.from(key, 'hex')
  const srtp = bytes === undefined ? undefined : new SrtpContext('AES_CM_128_HMAC_SHA1_80', bytes.subarray(0, 16), bytes.subarray(16))
  return { socket, port, srtp, ssrc: 0x1000 + i }
})
let sequence = 0
setInterval(() => {
  sequence++
  for (const p of phones) {
    const plain = encodeRtp({ payloadType: 0, sequence: sequence & 0xffff, timestamp: sequence * 160, ssrc: p.ssrc, payload })
    p.socket.send(p.srtp === undefined ? plain : p.srtp.protectRtp(plain), p.port, '127.0.0.1')
  }
}, 20)
process.on('disconnect', () => process.exit(0))
