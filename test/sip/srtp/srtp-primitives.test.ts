/**
 * SRTP's per-packet primitives written for speed: the HMAC-SHA1 (WebAssembly) and the AES-CM keystream made by one
 * reused AES-ECB cipher, held to RFC 2202's HMAC-SHA1 vectors and to Node's own HMAC and AES-CTR on random
 * keys and messages of every length a packet can have.
 */
import { createCipheriv, createHmac, randomBytes } from 'node:crypto'
import t from 'tap'
import { HmacSha1 } from '../../../transports/sip/media/srtp/hmac-sha1.js'
import { AesCmKeystream, writeSrtpIv } from '../../../transports/sip/media/srtp/srtp-aes-cm.js'

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex')

const hmac = (key: Uint8Array, message: Uint8Array, suffix?: Uint8Array, length = 20): Buffer => {
  const out = Buffer.alloc(length + 3, 0xee)
  new HmacSha1(key).tag(message, message.length, suffix, out, 3, length)
  if (out.subarray(0, 3).toString('hex') !== 'eeeeee') throw new Error('the tag was written before its offset')
  return out.subarray(3)
}

t.test('RFC 2202 section 3: HMAC-SHA1 test cases 1 to 5', async (t) => {
  t.same(hmac(Buffer.alloc(20, 0x0b), Buffer.from('Hi There')), hex('b617318655057264e28bc0b6fb378c8ef146be00'))
  t.same(hmac(Buffer.from('Jefe'), Buffer.from('what do ya want for nothing?')), hex('effcdf6ae5eb2fa2d27416d5f184df9c259a7c79'))
  t.same(hmac(Buffer.alloc(20, 0xaa), Buffer.alloc(50, 0xdd)), hex('125d7342b9ac11cd91a39af48aa17b4f63f175d3'))
  t.same(
    hmac(hex('0102030405060708090a0b0c0d0e0f10111213141516171819'), Buffer.alloc(50, 0xcd)),
    hex('4c9007f4026250c6bc8414f9bf50c86c2d7235da'),
  )
  // Case 5: the tag truncated to 96 bits.
  t.same(hmac(Buffer.alloc(20, 0x0c), Buffer.from('Test With Truncation'), undefined, 12), hex('4c1a03424b55e07fe7f27be1'))
  t.throws(() => new HmacSha1(Buffer.alloc(80, 0xaa)), RangeError, 'cases 6 and 7 (80-octet keys) must be hashed first: refused')
})

t.test('the same tag as createHmac for random keys, every message length up to 1,600 octets, with and without a suffix', async (t) => {
  let mismatches = 0
  for (let length = 0; length <= 1_600; length += length < 200 ? 1 : 37) {
    const key = randomBytes(1 + (length % 64))
    // The message is the buffer's first `length` octets: what follows (an SRTP packet's tag) is not hashed.
    const buffer = randomBytes(length + (length % 11))
    const message = buffer.subarray(0, length)
    // A 4-octet suffix (SRTP's ROC), none, or one longer than a block (the padding then spans more blocks).
    const suffix = length % 3 === 0 ? randomBytes(4) : length % 3 === 1 ? undefined : randomBytes(length % 130)
    const expected = createHmac('sha1', key).update(message)
    if (suffix !== undefined) expected.update(suffix)
    const out = Buffer.alloc(20)
    const mac = new HmacSha1(key)
    mac.tag(buffer, length, suffix, out, 0)
    // Twice with one object: no state may leak from one tag into the next.
    mac.tag(buffer, length, suffix, out, 0)
    if (!out.equals(expected.digest())) mismatches++
  }
  t.equal(mismatches, 0)
})

t.test('the AES-CM keystream from one ECB cipher equals AES-128-CTR under the same IV, for every packet length', async (t) => {
  const key = randomBytes(16)
  const keystream = new AesCmKeystream(key)
  let mismatches = 0
  for (const length of [0, 1, 15, 16, 17, 31, 32, 33, 160, 172, 320, 1_500, 4_096]) {
    const salt = randomBytes(14)
    const ssrc = randomBytes(4).readUInt32BE(0)
    const iv = writeSrtpIv(Buffer.alloc(16), salt, ssrc, length * 65_537)
    const input = randomBytes(length + 5)
    const expected = createCipheriv('aes-128-ctr', key, iv).update(input.subarray(5))
    const out = Buffer.alloc(length + 2, 0xee)
    keystream.xor(salt, ssrc, length * 65_537, input, 5, input.length, out, 2)
    if (!out.subarray(2).equals(expected) || out[0] !== 0xee || out[1] !== 0xee) mismatches++
  }
  t.equal(mismatches, 0)
})

t.test('a keystream made in batches equals AES-128-CTR per packet, whatever order the packets come in', async (t) => {
  const key = randomBytes(16)
  const salt = randomBytes(14)
  const batched = new AesCmKeystream(key, 16)
  // A stream running on, a loss, a late packet, a longer payload, a packet index across a rollover, a second SSRC
  // taking turns with the first and then taking over, and the first coming back.
  const [a, b] = [0x11223344, 0x55667788]
  const packets: [number, number, number][] = []
  for (let i = 0; i < 40; i++) packets.push([a, 65_530 + i, 160])
  packets.push([a, 65_580, 160], [a, 65_560, 160], [a, 65_581, 320], [a, 65_582, 160])
  for (let i = 0; i < 10; i++) packets.push([i % 2 === 0 ? a : b, 65_583 + i, 160])
  for (let i = 0; i < 30; i++) packets.push([b, 1_000 + i, 172])
  for (let i = 0; i < 5; i++) packets.push([a, 65_600 + i, 160])
  let mismatches = 0
  for (const [ssrc, index, length] of packets) {
    const input = randomBytes(length)
    const expected = createCipheriv('aes-128-ctr', key, writeSrtpIv(Buffer.alloc(16), salt, ssrc, index)).update(input)
    const out = Buffer.alloc(length)
    batched.xor(salt, ssrc, index, input, 0, length, out, 0)
    if (!out.equals(expected)) mismatches++
  }
  t.equal(mismatches, 0, `${packets.length} packets`)
})
