import { parse } from 'sdp-transform'
import t from 'tap'
import { answerOffer, createOffer, type LocalMedia, readAnswer } from '../../../transports/sip/media/sdp-offer-answer.js'
import { decodeSdesCrypto, encodeSdesCrypto } from '../../../transports/sip/media/srtp/sdes-crypto-codec.js'
import type { LocalSrtp, MediaEncryption } from '../../../transports/sip/media/srtp/sdes-negotiation.js'

const PEER_KEY = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d', 'hex')
const OUR_KEY = Buffer.alloc(30, 0xa5)
const PEER_INLINE = `inline:${PEER_KEY.toString('base64')}`

const local = (encryption: MediaEncryption, tls = true): LocalMedia => ({
  address: '203.0.113.5',
  port: 40000,
  sessionId: '1',
  sessionVersion: 1,
  srtp: { encryption, tls, keySalt: OUR_KEY } satisfies LocalSrtp,
})

/** An offer as baresip sends it with `mediaenc=srtp-mand`: RTP/SAVP, two crypto lines (_32 first here). */
function offer(
  profile = 'RTP/SAVP',
  crypto = [`a=crypto:1 AES_CM_128_HMAC_SHA1_32 ${PEER_INLINE}`, `a=crypto:2 AES_CM_128_HMAC_SHA1_80 ${PEER_INLINE}`],
) {
  return [
    'v=0',
    'o=- 1 1 IN IP4 198.51.100.7',
    's=-',
    'c=IN IP4 198.51.100.7',
    't=0 0',
    `m=audio 5004 ${profile} 0 101`,
    'a=rtpmap:0 PCMU/8000',
    'a=rtpmap:101 telephone-event/8000',
    ...crypto,
    '',
  ].join('\r\n')
}

t.test('an RTP/SAVP offer over TLS on an optional or required trunk: answered RTP/SAVP, one crypto line of ours', async (t) => {
  for (const encryption of ['optional', 'required'] as const) {
    const result = answerOffer(offer(), local(encryption))
    if (!result.ok) throw new Error(result.reason)
    const m = parse(result.answer).media[0]!
    t.equal(m.protocol, 'RTP/SAVP')
    t.same(
      m.crypto,
      [{ id: 1, suite: 'AES_CM_128_HMAC_SHA1_32', config: `inline:${OUR_KEY.toString('base64')}` }],
      "the offerer's first usable line, our key",
    )
    t.same(result.audio.srtp, { suite: 'AES_CM_128_HMAC_SHA1_32', tag: 1, local: OUR_KEY, remote: PEER_KEY })
  }
})

t.test('crypto lines we cannot honour are skipped for the next one; none usable is 488', async (t) => {
  const lines = [
    `a=crypto:1 AES_256_CM_HMAC_SHA1_80 inline:${Buffer.alloc(46).toString('base64')}`,
    `a=crypto:2 AES_CM_128_HMAC_SHA1_80 ${PEER_INLINE}|2^20|1:4`,
    `a=crypto:3 AES_CM_128_HMAC_SHA1_80 ${PEER_INLINE} UNENCRYPTED_SRTP`,
    `a=crypto:4 AES_CM_128_HMAC_SHA1_80 inline:${Buffer.alloc(20).toString('base64')}`,
    `a=crypto:5 AES_CM_128_HMAC_SHA1_80 ${PEER_INLINE}|2^31`,
  ]
  const result = answerOffer(offer('RTP/SAVP', lines), local('optional'))
  if (!result.ok) throw new Error(result.reason)
  t.equal(result.audio.srtp?.tag, 5, 'a lifetime is fine; AES-256, an MKI, UNENCRYPTED_SRTP and a short key are not')
  const none = answerOffer(offer('RTP/SAVP', lines.slice(0, 4)), local('optional'))
  t.match(none, { ok: false, status: 488, warning: /no supported SRTP crypto suite/ })
  t.match(answerOffer(offer('RTP/SAVP', []), local('required')), { ok: false, status: 488 })
})

t.test('RTP/SAVP is refused with 488 on a trunk without SRTP and over UDP or TCP signalling', async (t) => {
  t.match(answerOffer(offer(), local('none')), { ok: false, status: 488, reason: /not enabled/ })
  t.match(answerOffer(offer(), local('optional', false)), { ok: false, status: 488, reason: /TLS/ })
  t.match(answerOffer(offer(), { address: '203.0.113.5', port: 1, sessionId: '1', sessionVersion: 1 }), { ok: false, status: 488 })
})

t.test('plain RTP: refused 488 by a required trunk, answered plain otherwise (crypto lines in an AVP offer ignored)', async (t) => {
  t.match(answerOffer(offer('RTP/AVP', []), local('required')), { ok: false, status: 488, reason: /requires SRTP/ })
  for (const encryption of ['none', 'optional'] as const) {
    const result = answerOffer(offer('RTP/AVP'), local(encryption))
    if (!result.ok) throw new Error(result.reason)
    t.equal(parse(result.answer).media[0]!.protocol, 'RTP/AVP')
    t.equal(parse(result.answer).media[0]!.crypto, undefined)
    t.equal(result.audio.srtp, undefined)
  }
})

t.test('our offer is RTP/SAVP with one _80 line over TLS when SRTP is allowed; the answer must accept it', async (t) => {
  const ours = local('optional')
  const m = parse(createOffer(ours)).media[0]!
  t.equal(m.protocol, 'RTP/SAVP')
  t.same(m.crypto, [{ id: 1, suite: 'AES_CM_128_HMAC_SHA1_80', config: `inline:${OUR_KEY.toString('base64')}` }])
  t.equal(parse(createOffer(local('optional', false))).media[0]!.protocol, 'RTP/AVP', 'not over UDP or TCP')
  t.equal(parse(createOffer(local('none'))).media[0]!.protocol, 'RTP/AVP')

  const answer = (profile: string, crypto: string[]) => offer(profile, crypto)
  const good = readAnswer(answer('RTP/SAVP', [`a=crypto:1 AES_CM_128_HMAC_SHA1_80 ${PEER_INLINE}`]), undefined, ours)
  t.match(good, { ok: true, audio: { srtp: { tag: 1, suite: 'AES_CM_128_HMAC_SHA1_80', local: OUR_KEY, remote: PEER_KEY } } })
  t.match(readAnswer(answer('RTP/AVP', []), undefined, ours), { ok: false, reason: /refused SRTP/ })
  t.match(readAnswer(answer('RTP/SAVP', [`a=crypto:2 AES_CM_128_HMAC_SHA1_80 ${PEER_INLINE}`]), undefined, ours), { ok: false })
  t.match(readAnswer(answer('RTP/SAVP', [`a=crypto:1 AES_CM_128_HMAC_SHA1_80 ${PEER_INLINE}`])), { ok: false }, 'SAVP to a plain offer')
})

t.test('the a=crypto codec: decodes what we write, refuses bad tags and several keys', async (t) => {
  const line = encodeSdesCrypto({ tag: 7, suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: PEER_KEY })
  t.same(line, { id: 7, suite: 'AES_CM_128_HMAC_SHA1_80', config: PEER_INLINE })
  t.same(decodeSdesCrypto(line), { tag: 7, suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: PEER_KEY })
  t.equal(decodeSdesCrypto({ ...line, config: `${PEER_INLINE};${PEER_INLINE}` }), null)
  t.equal(decodeSdesCrypto({ ...line, id: 1e10 }), null)
  t.equal(decodeSdesCrypto({ ...line, sessionConfig: 'KDR=24' }), null)
  t.not(decodeSdesCrypto({ ...line, sessionConfig: 'WSH=128' }), null)
  t.equal(decodeSdesCrypto({ ...line, config: 'inline:%%%' }), null)
})
