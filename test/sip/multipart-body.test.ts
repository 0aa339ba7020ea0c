/**
 * The multipart parser (RFC 2046 section 5.1) and the choice of the SDP part (RFC 5621), on raw bytes: the RFC
 * 3204 INVITE body (SDP beside a binary ISUP IAM), a SIP-I body as Q.1912.5 carriers send it, and the edge cases
 * of delimiters, line ends and bounds.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { MAX_PARTS, parseMediaType, parseMultipart } from '../../transports/sip/message/multipart-body.js'
import { sdpOf, sessionBody } from '../../transports/sip/message/sdp-body.js'

const rfc3204 = readFileSync(new URL('fixtures/multipart/rfc3204-body.bin', import.meta.url))
const SDP = 'v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n'

t.test('the RFC 3204 body: two parts, the binary ISUP byte for byte, the folded Content-Type unfolded', async (t) => {
  const parsed = parseMultipart(rfc3204, 'unique-boundary-1')
  if (!parsed.ok) throw new Error(parsed.reason)
  t.equal(parsed.parts.length, 2)
  t.same(parsed.parts[0]!.headers, [{ name: 'content-type', value: 'application/SDP; charset=ISO-10646' }])
  t.match(parsed.parts[0]!.body.toString(), /^v=0\r\n[\s\S]*m=audio 9092 RTP\/AVP 0 3 4\r\n$/, 'the SDP keeps its last line end')
  t.same(parsed.parts[1]!.headers, [
    { name: 'content-type', value: 'application/ISUP; version=nxv3; base=etsi121' },
    { name: 'content-disposition', value: 'signal; handling=optional' },
  ])
  t.equal(parsed.parts[1]!.body.length, 60)
  t.equal(parsed.parts[1]!.body.toString('hex', 0, 4), '01004900', 'IAM, with its NUL bytes')
  const found = sessionBody('multipart/mixed; boundary=unique-boundary-1', rfc3204)
  t.equal(found.kind, 'sdp')
  t.match(found.kind === 'sdp' && found.sdp, /^v=0\r\no=jpeterson/)
})

t.test('a SIP-I body: SDP, then ISUP with version=itu-t92+ and a quoted boundary', async (t) => {
  const isup = Buffer.from('0100200a0003020604011021430a08011544214365870900', 'hex')
  const body = Buffer.concat([
    Buffer.from(`preamble to ignore\r\n--sip-i.b1\r\nContent-Type: application/sdp\r\n\r\n${SDP}\r\n--sip-i.b1\r\n`),
    Buffer.from('Content-Type: application/ISUP;version=itu-t92+\r\nContent-Disposition: signal;handling=required\r\n\r\n'),
    isup,
    Buffer.from('\r\n--sip-i.b1--\r\nepilogue to ignore'),
  ])
  const found = sessionBody('multipart/mixed;boundary="sip-i.b1"', body)
  t.same(found, { kind: 'sdp', sdp: SDP })
})

t.test('which part is the session description', async (t) => {
  const mixed = (...parts: string[]) => Buffer.from(`--b\r\n${parts.join('\r\n--b\r\n')}\r\n--b--\r\n`)
  const type = 'multipart/mixed;boundary=b'
  t.same(sessionBody(type, mixed(`Content-Type: application/sdp\r\nContent-Disposition: session\r\n\r\n${SDP}`)), { kind: 'sdp', sdp: SDP })
  t.same(
    sessionBody(
      type,
      mixed(
        `Content-Type: application/sdp\r\nContent-Disposition: early-session\r\n\r\nv=0\r\n`,
        `Content-Type: application/sdp\r\n\r\n${SDP}`,
      ),
    ),
    { kind: 'sdp', sdp: SDP },
    'an early-session SDP is not the offer; the part without a disposition is',
  )
  t.same(sessionBody(type, mixed('Content-Type: application/ISUP;version=itu-t92+\r\n\r\nxyz')), { kind: 'none' }, 'no SDP part: as no SDP')
  t.same(sessionBody(type, mixed('\r\nplain text without headers')), { kind: 'none' })
  const nested = mixed(
    `Content-Type: multipart/alternative;boundary=inner\r\n\r\n--inner\r\nContent-Type: application/sdp\r\n\r\n${SDP}\r\n--inner--`,
  )
  t.same(sessionBody(type, nested), { kind: 'sdp', sdp: SDP }, 'inside a multipart/alternative inside the mixed')
  t.same(sessionBody('multipart/related;boundary=b', mixed(`Content-Type: application/sdp\r\n\r\n${SDP}`)).kind, 'sdp')
  t.same(sessionBody('application/sdp', Buffer.from(SDP)), { kind: 'sdp', sdp: SDP })
  t.same(sessionBody(undefined, Buffer.from(SDP)), { kind: 'sdp', sdp: SDP }, 'no Content-Type: read as SDP, as before')
  t.same(sessionBody('application/unknownformat', Buffer.from('<audio/>')), { kind: 'unsupported', type: 'application/unknownformat' })
  t.same(sessionBody('multipart/signed;boundary=b', mixed(`Content-Type: application/sdp\r\n\r\n${SDP}`)).kind, 'unsupported')
  t.same(sessionBody('application/ISUP', Buffer.alloc(0)), { kind: 'none' }, 'an empty body of any type: no offer')
})

t.test('delimiters, line ends and bounds', async (t) => {
  const lf = Buffer.from(`--b\nContent-Type: application/sdp\n\nv=0\n--b--`)
  t.same(
    parseMultipart(lf, 'b'),
    { ok: true, parts: [{ headers: [{ name: 'content-type', value: 'application/sdp' }], body: Buffer.from('v=0') }] },
    'LF only',
  )
  const padded = Buffer.from(`--b  \r\n\r\none\r\n--bx\r\nstill one\r\n--b--\t\r\n`)
  const parsed = parseMultipart(padded, 'b')
  t.same(
    parsed.ok && parsed.parts.map((p) => p.body.toString()),
    ['one\r\n--bx\r\nstill one'],
    'padding after a delimiter; --bx is body text',
  )
  t.same(parseMultipart(Buffer.from('inline --b is no delimiter\r\n--b--'), 'b'), { ok: true, parts: [] }, '--b inside a line is text')
  t.match(parseMultipart(Buffer.from('--b\r\n\r\npart'), 'b'), { ok: false, reason: /no close delimiter/ }, 'cut before the close')
  t.match(parseMultipart(Buffer.from('no delimiter at all'), 'b'), { ok: false, reason: 'no boundary delimiter' })
  t.match(parseMultipart(Buffer.from('--b\r\nbroken header\r\n\r\nx\r\n--b--'), 'b'), { ok: false, reason: /part 1: bad header line/ })
  t.match(parseMultipart(Buffer.from('--b\r\nContent-Type: a/b\r\nno blank line\r\n--b--'), 'b'), { ok: false, reason: /no blank line/ })
  t.match(parseMultipart(Buffer.from('x'), 'b'.repeat(71)), { ok: false, reason: /1-70/ })
  const many = Buffer.from(`${'--b\r\n\r\nx\r\n'.repeat(MAX_PARTS + 1)}--b--\r\n`)
  t.match(parseMultipart(many, 'b'), { ok: false, reason: `more than ${MAX_PARTS} parts` })
  t.equal(parseMultipart(Buffer.from(`${'--b\r\n\r\nx\r\n'.repeat(MAX_PARTS)}--b--\r\n`), 'b').ok, true, `${MAX_PARTS} parts are fine`)
  const bigHeader = Buffer.from(`--b\r\nX-Pad: ${'p'.repeat(5000)}\r\n\r\nx\r\n--b--`)
  t.match(parseMultipart(bigHeader, 'b'), { ok: false, reason: /headers over 4096 bytes/ })
  t.match(sessionBody('multipart/mixed', Buffer.from('--b--')), { kind: 'malformed', reason: /without a boundary/ })
  t.match(sessionBody('multipart/mixed;boundary=b', many), { kind: 'malformed' })
  t.same(parseMediaType('Application/SDP ; charset=utf-8')?.type, 'application/sdp')
  t.equal(parseMediaType('not a type'), null)
})

t.test('sdpOf: the SDP of a message in a dialog, for the offer/answer readers', async (t) => {
  const message = (type: string | undefined, body: string) => ({
    body: Buffer.from(body),
    headers: type === undefined ? [] : [{ name: 'Content-Type', value: type }],
  })
  t.equal(sdpOf(message('application/sdp', 'v=0\r\n')), 'v=0\r\n', 'a plain SDP body')
  t.equal(sdpOf(message(undefined, 'v=0\r\n')), 'v=0\r\n', 'no Content-Type: taken as SDP')
  t.equal(sdpOf(message('application/sdp', '')), '', 'no body: no offer')
  const mixed = '--x\r\nContent-Type: application/ISUP\r\n\r\nisup\r\n--x\r\nContent-Type: application/sdp\r\n\r\nv=0\r\n--x--\r\n'
  t.equal(sdpOf(message('multipart/mixed;boundary=x', mixed)), 'v=0', 'the session part of a multipart')
  t.equal(
    sdpOf(message('multipart/mixed;boundary=x', '--x\r\nContent-Type: text/plain\r\n\r\nhi\r\n--x--\r\n')),
    '',
    'a multipart without SDP: no offer',
  )
  t.equal(sdpOf(message('text/html', '<p>')), '<p>', 'a body that is no SDP comes back whole, for the reader to refuse')
})
