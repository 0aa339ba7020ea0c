import t from 'tap'
import { decodeSipMessage, encodeSipMessage } from '../../transports/sip/message/sip-message-codec.js'
import { getHeader, getHeaderValues, type SipRequest } from '../../transports/sip/message/sip-message.js'
import { buildResponse, responseToDecodeError } from '../../transports/sip/message/sip-response.js'

const INVITE = [
  'INVITE sip:+15550001111@gw.example.com SIP/2.0',
  'Via: SIP/2.0/UDP edge.example.com;branch=z9hG4bK2d4790.1, SIP/2.0/UDP pbx.example.net:5060;branch=z9hG4bK74bf9',
  'v: SIP/2.0/UDP phone.example.net;branch=z9hG4bKabc',
  'Max-Forwards: 70',
  'From: <sip:+15552223333@pbx.example.net>;tag=9fxced76sl',
  'To: <sip:+15550001111@gw.example.com>',
  'Call-ID: 3848276298220188511@pbx.example.net',
  'CSeq: 1 INVITE',
  'Content-Length: 0',
  '',
  '',
].join('\r\n')

function request(text = INVITE): SipRequest {
  const r = decodeSipMessage(Buffer.from(text))
  if (!r.ok) throw new Error(r.error.reason)
  return r.message as SipRequest
}

t.test('copies Via (all, in order), From, Call-ID, CSeq; tags To; reason phrase from RFC 3261', async (t) => {
  const res = buildResponse(request(), 486, { toTag: 'gw42' })
  t.same([res.status, res.reason], [486, 'Busy Here'])
  t.same(getHeaderValues(res, 'Via'), [
    'SIP/2.0/UDP edge.example.com;branch=z9hG4bK2d4790.1',
    'SIP/2.0/UDP pbx.example.net:5060;branch=z9hG4bK74bf9',
    'SIP/2.0/UDP phone.example.net;branch=z9hG4bKabc',
  ])
  t.equal(getHeader(res, 'To'), '<sip:+15550001111@gw.example.com>;tag=gw42')
  t.equal(getHeader(res, 'From'), '<sip:+15552223333@pbx.example.net>;tag=9fxced76sl')
  t.equal(getHeader(res, 'CSeq'), '1 INVITE')
  t.equal(getHeader(res, 'Max-Forwards'), undefined, 'not copied')
  const again = decodeSipMessage(encodeSipMessage(res))
  t.ok(again.ok, 'the response decodes')
})

t.test('100 Trying has no To tag; an in-dialog request keeps its To tag; extra headers and body', async (t) => {
  t.equal(getHeader(buildResponse(request(), 100, { toTag: 'x' }), 'To'), '<sip:+15550001111@gw.example.com>')
  const inDialog = request(INVITE.replace('To: <sip:+15550001111@gw.example.com>', 'To: <sip:+15550001111@gw.example.com>;tag=gw1'))
  t.equal(getHeader(buildResponse(inDialog, 200, { toTag: 'other' }), 'To'), '<sip:+15550001111@gw.example.com>;tag=gw1')
  const ok = buildResponse(request(), 200, {
    toTag: 't',
    headers: [{ name: 'Contact', value: '<sip:gw@203.0.113.5>' }],
    body: Buffer.from('v=0\r\n'),
  })
  t.equal(getHeader(ok, 'Contact'), '<sip:gw@203.0.113.5>')
  t.match(encodeSipMessage(ok).toString(), /Content-Length: 5\r\n\r\nv=0\r\n$/)
})

t.test('a request that did not decode still gets its 400/505, with the reason in a Warning', async (t) => {
  const bad = decodeSipMessage(Buffer.from(INVITE.replace('CSeq: 1 INVITE', 'CSeq: 1 BYE')))
  if (bad.ok) throw new Error('expected a decode error')
  const res = responseToDecodeError(bad.error, 'gw9')!
  t.same([res.status, res.reason], [400, 'Bad Request'])
  t.match(getHeader(res, 'Warning'), /^399 voxgate "CSeq method BYE differs from INVITE"$/)
  t.equal(getHeaderValues(res, 'Via')?.length, 3)

  const version = decodeSipMessage(Buffer.from(INVITE.replace('INVITE sip:+15550001111@gw.example.com SIP/2.0', 'INVITE sip:x@y SIP/3.0')))
  if (version.ok) throw new Error('expected a decode error')
  const unsupported = responseToDecodeError(version.error, 't')
  t.same(
    [unsupported?.status, unsupported?.reason],
    [505, 'Version Not Supported'],
    'a wrong version is answered 505 when its Via survived',
  )
  t.equal(unsupported === null ? 0 : getHeaderValues(unsupported, 'Via')?.length, 3, "to the request's Vias")

  const response = decodeSipMessage(Buffer.from('SIP/2.0 999 Nope\r\n\r\n'))
  t.equal(response.ok ? 'decoded' : responseToDecodeError(response.error, 't'), null, 'a bad response is dropped, not answered')
})
