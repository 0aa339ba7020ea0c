import t from 'tap'
import { aesCm, writeSrtpIv } from '../../../transports/sip/media/srtp/srtp-aes-cm.js'
import { SrtpContext } from '../../../transports/sip/media/srtp/srtp-context.js'
import { deriveSessionKey, SrtpLabel } from '../../../transports/sip/media/srtp/srtp-key-derivation.js'
import { encodeRtp } from '../../../transports/sip/media/rtp-codec.js'

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex')

t.test('RFC 3711 B.2: the AES-CM keystream for SSRC 0 and index 0, at its start and at its end', async (t) => {
  const key = hex('2B7E151628AED2A6ABF7158809CF4F3C')
  // The RFC's salt is given "already shifted": its 14 octets are the offset's first 14.
  const iv = writeSrtpIv(Buffer.alloc(16), hex('F0F1F2F3F4F5F6F7F8F9FAFBFCFD'), 0, 0)
  t.same(iv, hex('F0F1F2F3F4F5F6F7F8F9FAFBFCFD0000'))
  const keystream = aesCm(key, iv, Buffer.alloc(1044512))
  t.same(
    keystream.subarray(0, 48),
    hex('E03EAD0935C95E80E166B16DD92B4EB4 D23513162B02D0F72A43A2FE4A5F97AB 41E95B3BB0A2E8DD477901E4FCA894C0'),
  )
  t.same(keystream.subarray(-48), hex('EC8CDF7398607CB0F2D21675EA9EA1E4 362B7C3C6773516318A077D7FC5073AE 6A2CC3787889374FBEB4C81B17BA6C44'))
})

t.test('RFC 3711 B.3: the cipher key, cipher salt and auth key from the master key and salt (kdr 0)', async (t) => {
  const key = hex('E1F97A0D3E018BE0D64FA32C06DE4139')
  const salt = hex('0EC675AD498AFEEBB6960B3AABE6')
  t.same(deriveSessionKey(key, salt, SrtpLabel.rtpEncryption, 16), hex('C61E7A93744F39EE10734AFE3FF7A087'))
  t.same(deriveSessionKey(key, salt, SrtpLabel.rtpSalt, 14), hex('30CBBC08863D8C85D49DB34A9AE1'))
  t.same(
    deriveSessionKey(key, salt, SrtpLabel.rtpAuthentication, 94),
    hex(`CEBE321F6FF7716B6FD4AB49AF256A15 6D38BAA48F0A0ACF3C34E2359E6CDBCE E049646C43D9327AD175578EF7227098
         6371C10C9A369AC2F94A8C5FBCDDDC25 6D6E919A48B610EF17C2041E47403576 6B68642C59BBFC2F34DB60DBDFB2`),
  )
})

// libsrtp's srtp_validate() (test/srtp_driver.c): the B.3 master key, SSRC 0xcafebabe, the default suite.
const MASTER_KEY = hex('E1F97A0D3E018BE0D64FA32C06DE4139')
const MASTER_SALT = hex('0EC675AD498AFEEBB6960B3AABE6')
const RTP_PLAIN = hex('800f1234decafbadcafebabe abababababababababababababababab')
const SRTP = hex('800f1234decafbadcafebabe 4e55dc4ce79978d88ca4d215949d2402 b78d6acc99ea179b8dbb')
const RTCP_PLAIN = hex('81c8000bcafebabe abababababababababababababababab')
const SRTCP_INDEX_1 = hex('81c8000bcafebabe 7128035be487b9bdbef89041f977a5a8 80000001 993e08cd54d6c1230798')

t.test('AES_CM_128_HMAC_SHA1_80 protects and unprotects RTP byte for byte as libsrtp does', async (t) => {
  const sender = new SrtpContext('AES_CM_128_HMAC_SHA1_80', MASTER_KEY, MASTER_SALT)
  t.same(sender.protectRtp(RTP_PLAIN), SRTP)
  const receiver = new SrtpContext('AES_CM_128_HMAC_SHA1_80', MASTER_KEY, MASTER_SALT)
  t.same(receiver.unprotectRtp(SRTP), RTP_PLAIN)
})

t.test('sealing a packet where it lies (tag room after it) writes the same octets as protecting a copy', async (t) => {
  const sender = new SrtpContext('AES_CM_128_HMAC_SHA1_80', MASTER_KEY, MASTER_SALT)
  const room = Buffer.alloc(RTP_PLAIN.length + sender.rtpOverhead, 0xee)
  RTP_PLAIN.copy(room)
  t.equal(sender.protectRtpInPlace(room), room, 'the same buffer comes back')
  t.same(room, SRTP)
  t.same(RTP_PLAIN, hex('800f1234decafbadcafebabe abababababababababababababababab'), 'protectRtp left its input alone')
  // A longer stream, with a payload not a multiple of four octets and an odd offset in a shared buffer: every
  // packet equals what a second context makes of a copy, and unprotects back.
  const a = new SrtpContext('AES_CM_128_HMAC_SHA1_32', MASTER_KEY, MASTER_SALT)
  const b = new SrtpContext('AES_CM_128_HMAC_SHA1_32', MASTER_KEY, MASTER_SALT)
  const rx = new SrtpContext('AES_CM_128_HMAC_SHA1_32', MASTER_KEY, MASTER_SALT)
  const slab = Buffer.alloc(4096)
  for (let seq = 0; seq < 40; seq++) {
    const payload = Buffer.alloc(17 + seq * 5, seq)
    const plain = encodeRtp({ payloadType: 0, sequence: seq, timestamp: seq * 160, ssrc: 0xcafebabe, payload })
    const at = 1 + seq * 3
    const inPlace = slab.subarray(at, at + plain.length + a.rtpOverhead)
    plain.copy(inPlace)
    a.protectRtpInPlace(inPlace)
    t.same(inPlace, b.protectRtp(plain), `packet ${seq}`)
    t.same(rx.unprotectRtp(Buffer.from(inPlace), true), plain, `packet ${seq} back`)
  }
  t.throws(() => a.protectRtpInPlace(Buffer.from(RTP_PLAIN.subarray(0, 14))), RangeError, 'no room for the header and tag')
})

t.test('SRTCP: the E flag and index follow the encrypted part, an 80-bit tag after them, as libsrtp writes', async (t) => {
  const sender = new SrtpContext('AES_CM_128_HMAC_SHA1_80', MASTER_KEY, MASTER_SALT)
  // RFC 3711 section 3.4: the first SRTCP index is 0; libsrtp's vector is its second packet (index 1).
  const first = sender.protectRtcp(RTCP_PLAIN)
  t.same(first.readUInt32BE(RTCP_PLAIN.length), 0x80000000)
  t.same(sender.protectRtcp(RTCP_PLAIN), SRTCP_INDEX_1)
  const receiver = new SrtpContext('AES_CM_128_HMAC_SHA1_80', MASTER_KEY, MASTER_SALT)
  t.same(receiver.unprotectRtcp(SRTCP_INDEX_1), RTCP_PLAIN)
  t.same(receiver.unprotectRtcp(first), RTCP_PLAIN)
  t.equal(receiver.unprotectRtcp(SRTCP_INDEX_1), 'replayed')
  const tampered = Buffer.from(SRTCP_INDEX_1)
  tampered[10]! ^= 1
  t.equal(new SrtpContext('AES_CM_128_HMAC_SHA1_80', MASTER_KEY, MASTER_SALT).unprotectRtcp(tampered), 'unauthenticated')
})

t.test('SRTCP with the E flag clear is authenticated and passed on unencrypted', async (t) => {
  const sender = new SrtpContext('AES_CM_128_HMAC_SHA1_80', MASTER_KEY, MASTER_SALT)
  const packet = Buffer.from(sender.protectRtcp(RTCP_PLAIN))
  // Rebuild as an unencrypted SRTCP packet: plain body, E = 0, the tag computed over that.
  const { createHmac } = await import('node:crypto')
  const auth = deriveSessionKey(MASTER_KEY, MASTER_SALT, SrtpLabel.rtcpAuthentication, 20)
  RTCP_PLAIN.copy(packet, 0)
  packet.writeUInt32BE(7, RTCP_PLAIN.length)
  createHmac('sha1', auth)
    .update(packet.subarray(0, RTCP_PLAIN.length + 4))
    .digest()
    .copy(packet, RTCP_PLAIN.length + 4, 0, 10)
  t.same(new SrtpContext('AES_CM_128_HMAC_SHA1_80', MASTER_KEY, MASTER_SALT).unprotectRtcp(packet), RTCP_PLAIN)
})

const packet = (sequence: number, payload = Buffer.alloc(160, 0x55), ssrc = 0x11223344) =>
  encodeRtp({ payloadType: 0, sequence, timestamp: sequence * 160, ssrc, payload })

for (const suite of ['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32'] as const) {
  t.test(`${suite}: round trip, a 10- or 4-octet tag, the payload unreadable on the wire`, async (t) => {
    const key = Buffer.alloc(16, 7)
    const salt = Buffer.alloc(14, 9)
    const tx = new SrtpContext(suite, key, salt)
    const rx = new SrtpContext(suite, key, salt)
    const plain = packet(1000)
    const wire = tx.protectRtp(plain)
    t.equal(wire.length, plain.length + (suite.endsWith('80') ? 10 : 4))
    t.same(wire.subarray(0, 12), plain.subarray(0, 12), 'the header stays in the clear')
    t.notSame(wire.subarray(12, 172), plain.subarray(12))
    t.same(rx.unprotectRtp(wire), plain)
  })
}

t.test('a changed bit anywhere, a wrong key or a cut tag fails authentication; nothing is decrypted', async (t) => {
  const key = Buffer.alloc(16, 1)
  const salt = Buffer.alloc(14, 2)
  const wire = new SrtpContext('AES_CM_128_HMAC_SHA1_80', key, salt).protectRtp(packet(5))
  for (const at of [1, 3, 11, 12, 100, wire.length - 1]) {
    const bad = Buffer.from(wire)
    bad[at]! ^= 0x01
    t.equal(new SrtpContext('AES_CM_128_HMAC_SHA1_80', key, salt).unprotectRtp(bad), 'unauthenticated', `bit flipped at ${at}`)
  }
  t.equal(new SrtpContext('AES_CM_128_HMAC_SHA1_80', Buffer.alloc(16, 3), salt).unprotectRtp(wire), 'unauthenticated')
  t.equal(new SrtpContext('AES_CM_128_HMAC_SHA1_80', key, salt).unprotectRtp(wire.subarray(0, 15)), 'invalid')
  // The tampered packets left no state: the genuine one still goes through.
  const rx = new SrtpContext('AES_CM_128_HMAC_SHA1_80', key, salt)
  rx.unprotectRtp(Buffer.concat([wire.subarray(0, 20), Buffer.alloc(wire.length - 20)]))
  t.type(rx.unprotectRtp(wire), Buffer)
})

t.test('replays are refused: the same packet twice, and one older than the 128-packet window', async (t) => {
  const key = Buffer.alloc(16, 4)
  const salt = Buffer.alloc(14, 5)
  const tx = new SrtpContext('AES_CM_128_HMAC_SHA1_80', key, salt)
  const rx = new SrtpContext('AES_CM_128_HMAC_SHA1_80', key, salt)
  const sent = Array.from({ length: 300 }, (_, i) => tx.protectRtp(packet(100 + i)))
  t.type(rx.unprotectRtp(sent[0]!), Buffer)
  t.equal(rx.unprotectRtp(sent[0]!), 'replayed')
  // Reordered within the window: accepted once each.
  t.type(rx.unprotectRtp(sent[5]!), Buffer)
  t.type(rx.unprotectRtp(sent[3]!), Buffer)
  t.equal(rx.unprotectRtp(sent[3]!), 'replayed')
  t.type(rx.unprotectRtp(sent[4]!), Buffer)
  t.type(rx.unprotectRtp(sent[299]!), Buffer)
  t.equal(rx.unprotectRtp(sent[171]!), 'replayed', 'older than the window: cannot be told from a replay')
  t.type(rx.unprotectRtp(sent[172]!), Buffer, 'the oldest index still inside the window')
  t.equal(rx.unprotectRtp(sent[299]!), 'replayed')
})

t.test('the rollover counter: sequence numbers wrap past 65535 on both sides, reordered across the wrap', async (t) => {
  const key = Buffer.alloc(16, 6)
  const salt = Buffer.alloc(14, 8)
  const tx = new SrtpContext('AES_CM_128_HMAC_SHA1_32', key, salt)
  const rx = new SrtpContext('AES_CM_128_HMAC_SHA1_32', key, salt)
  const seqs = Array.from({ length: 40 }, (_, i) => (65520 + i) & 0xffff)
  const wire = seqs.map((s) => tx.protectRtp(packet(s)))
  // Sent after the wrap with ROC 1: the keystream differs from ROC 0's for the same sequence number.
  const again = new SrtpContext('AES_CM_128_HMAC_SHA1_32', key, salt).protectRtp(packet(4))
  t.notSame(wire[20]!.subarray(12), again.subarray(12), 'seq 4 after the wrap is encrypted under ROC 1')
  const order = [...seqs.keys()]
  // Swap the packets either side of the wrap (65535 and 0).
  ;[order[15], order[16]] = [order[16]!, order[15]!]
  for (const i of order) t.same(rx.unprotectRtp(wire[i]!), packet(seqs[i]!), `seq ${seqs[i]}`)
})

t.test('a fresh SSRC starts its own ROC and window; the same key serves both', async (t) => {
  const key = Buffer.alloc(16, 9)
  const salt = Buffer.alloc(14, 1)
  const tx = new SrtpContext('AES_CM_128_HMAC_SHA1_80', key, salt)
  const rx = new SrtpContext('AES_CM_128_HMAC_SHA1_80', key, salt)
  t.type(rx.unprotectRtp(tx.protectRtp(packet(7, undefined, 1))), Buffer)
  t.type(rx.unprotectRtp(tx.protectRtp(packet(7, undefined, 2))), Buffer)
})

t.test('in place: the payload decrypted in the packet itself, the result a view of it; a dropped packet untouched', async (t) => {
  const key = Buffer.alloc(16, 2)
  const salt = Buffer.alloc(14, 3)
  const tx = new SrtpContext('AES_CM_128_HMAC_SHA1_80', key, salt)
  const rx = new SrtpContext('AES_CM_128_HMAC_SHA1_80', key, salt)
  const plain = packet(40)
  const wire = tx.protectRtp(plain)
  const clear = rx.unprotectRtp(wire, true)
  if (typeof clear === 'string') return t.fail(clear)
  t.same(clear, plain)
  t.equal(clear.buffer, wire.buffer, 'no copy: the same memory')
  t.same(wire.subarray(0, plain.length), plain, 'the packet now holds the clear payload')
  // A forged packet (its last payload octet flipped) is refused and left as it came.
  const forged = tx.protectRtp(packet(41))
  forged[forged.length - 11]! ^= 1
  const before = Buffer.from(forged)
  t.equal(rx.unprotectRtp(forged, true), 'unauthenticated')
  t.same(forged, before)
})

t.test('a payload at any alignment in memory decrypts the same (the XOR goes a word at a time only when aligned)', async (t) => {
  const key = Buffer.alloc(16, 5)
  const salt = Buffer.alloc(14, 6)
  const tx = new SrtpContext('AES_CM_128_HMAC_SHA1_80', key, salt)
  const rx = new SrtpContext('AES_CM_128_HMAC_SHA1_80', key, salt)
  for (let shift = 0; shift < 4; shift++) {
    const plain = packet(200 + shift, Buffer.alloc(157 + shift, 0x55 + shift))
    const wire = tx.protectRtp(plain)
    // The packet copied `shift` octets into a larger buffer: its payload no longer starts on a 4-octet boundary.
    const holder = Buffer.alloc(wire.length + shift)
    wire.copy(holder, shift)
    t.same(rx.unprotectRtp(holder.subarray(shift), shift % 2 === 0), plain, `offset ${shift}`)
  }
})
