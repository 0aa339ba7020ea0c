// SIP trunk: RFC 3261's example INVITE carrying RFC 4566's example SDP, through our SIP parser and SDP answerer.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { answerOffer } from '../../transports/sip/media/sdp-offer-answer.js'
import { decodeSipMessage } from '../../transports/sip/message/sip-message-codec.js'
import { getHeader } from '../../transports/sip/message/sip-message.js'

const read = (name: string) => readFileSync(new URL(`../fixtures/sip-trunk/${name}`, import.meta.url), 'utf8').replace(/\n/g, '\r\n')
const SDP = read('rfc4566-section5-example.sdp')
// F1's head as the RFC prints it; its body ("not shown") becomes the SDP example, and Content-Length its length.
const INVITE = read('rfc3261-section24.2-f1-invite.txt').replace('Content-Length: 142', `Content-Length: ${Buffer.byteLength(SDP)}`) + SDP

t.test('RFC 3261 section 24.2 F1 parses: method, URI, the headers as printed, the body', async (t) => {
  const decoded = decodeSipMessage(Buffer.from(INVITE))
  if (!decoded.ok) throw new Error(`not parsed: ${decoded.error.reason}`)
  const message = decoded.message
  t.equal(message.kind, 'request')
  if (message.kind !== 'request') return
  t.equal(message.method, 'INVITE')
  t.equal(message.uri, 'sip:bob@biloxi.com')
  t.equal(getHeader(message, 'via'), 'SIP/2.0/UDP pc33.atlanta.com;branch=z9hG4bKnashds8')
  t.equal(getHeader(message, 'From'), 'Alice <sip:alice@atlanta.com>;tag=1928301774')
  t.equal(getHeader(message, 'To'), 'Bob <sip:bob@biloxi.com>')
  t.equal(getHeader(message, 'Call-ID'), 'a84b4c76e66710')
  t.equal(getHeader(message, 'CSeq'), '314159 INVITE')
  t.equal(getHeader(message, 'Max-Forwards'), '70')
  t.equal(getHeader(message, 'Contact'), '<sip:alice@pc33.atlanta.com>')
  t.equal(message.body.toString('utf8'), SDP)
})

t.test('RFC 4566 section 5 example as an offer: PCMU audio answered, video refused, recvonly mirrored', async (t) => {
  const result = answerOffer(SDP, { address: '203.0.113.5', port: 40000, sessionId: '4242', sessionVersion: 1 })
  if (!result.ok) throw new Error(`refused: ${result.reason}`)
  t.match(result.audio, {
    codec: 'PCMU',
    payloadType: 0,
    telephoneEventPayloadType: undefined,
    remotePort: 49170,
    remoteDirection: 'recvonly',
  })
  // c= carries a multicast address with a TTL (224.2.17.12/127): the address is the part before the slash.
  t.equal(result.audio.remoteAddress, '224.2.17.12')
  const lines = result.answer.split('\r\n')
  t.ok(lines.includes('m=audio 40000 RTP/AVP 0'), 'audio answered with PCMU alone')
  t.ok(lines.includes('a=sendonly'), "the offer's session-level recvonly is mirrored")
  t.ok(
    lines.some((l) => /^m=video 0 RTP\/AVP 99$/.test(l)),
    'the video stream is kept in its place and refused with port 0',
  )
})
