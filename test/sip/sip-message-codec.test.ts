import { readFileSync } from 'node:fs'
import t from 'tap'
import { decodeSipMessage, encodeSipMessage, MAX_HEADERS } from '../../transports/sip/message/sip-message-codec.js'
import { getHeader, getHeaderValues, type SipMessage, type SipRequest } from '../../transports/sip/message/sip-message.js'
import { SipStreamFramer } from '../../transports/sip/endpoint/sip-stream-framer.js'
import { parseCSeq, parseNameAddr, parseUri, parseVia, unescapeUser } from '../../transports/sip/message/sip-uri-codec.js'

/** RFC 4475's torture messages, byte for byte as the RFC's archive holds them (fixtures/rfc4475/README.md). */
const rfc4475 = (name: string): Buffer => readFileSync(new URL(`fixtures/rfc4475/${name}.dat`, import.meta.url))

function decoded(bytes: Buffer | string): SipMessage {
  const result = decodeSipMessage(typeof bytes === 'string' ? Buffer.from(bytes) : bytes)
  if (!result.ok) throw new Error(`expected a message, got ${result.error.code}: ${result.error.reason}`)
  return result.message
}

t.test('RFC 4475 3.1.1.1, a short tortuous INVITE: folding, LWS, compact forms, escapes, unknown headers', async (t) => {
  const msg = decoded(rfc4475('wsinv')) as SipRequest
  t.equal(msg.kind, 'request')
  t.equal(msg.method, 'INVITE')
  t.equal(msg.uri, 'sip:vivekg@chair-dnrc.example.com;unknownparam')
  t.same([...parseUri(msg.uri)!.params], [['unknownparam', null]])

  const to = parseNameAddr(getHeader(msg, 'To')!)!
  t.equal(to.displayName, undefined)
  t.equal(to.uri.user, 'vivekg')
  t.equal(to.params.get('tag'), '1918181833n', 'parameters after an addr-spec belong to the header')
  const from = parseNameAddr(getHeader(msg, 'f')!)!
  t.equal(from.displayName, 'J Rosenberg \\"', 'quoted-pair escapes undone')
  t.equal(from.params.get('tag'), '98asjd8')

  t.equal(getHeader(msg, 'max-forwards'), '0068')
  t.equal(getHeader(msg, 'i'), 'wsinv.ndaksdj@192.0.2.1', 'compact and long names are the same header')
  t.same(parseCSeq(getHeader(msg, 'CSeq')!), { seq: 9, method: 'INVITE' }, 'folded CSeq with leading zeros')
  t.equal(getHeader(msg, 'Subject'), '', 'an empty Subject (compact s)')
  t.equal(getHeader(msg, 'NewFangledHeader'), 'newfangled value continued newfangled value', 'folding becomes one space')
  t.equal(getHeader(msg, 'UnknownHeaderWithUnusualValue'), ';;,,;;,;', 'unknown headers are kept as text')

  const vias = getHeaderValues(msg, 'Via')!.map((v) => parseVia(v)!)
  t.same(
    vias.map((v) => [v.transport, v.host, v.params.get('branch')]),
    [
      ['UDP', '192.0.2.2', '390skdjuw'],
      ['TCP', 'spindle.example.com', 'z9hG4bK9ikj8'],
      ['UDP', '192.168.255.111', 'z9hG4bK30239'],
    ],
    'three Vias: one line (v) with two values after a long-form one',
  )
  const contact = parseNameAddr(getHeaderValues(msg, 'Contact')![0]!)!
  t.equal(contact.displayName, 'Quoted string ""')
  t.same(
    [...contact.params],
    [
      ['newparam', 'newvalue'],
      ['secondparam', null],
      ['q', '0.33'],
    ],
  )
  t.equal(msg.body.length, 150)
  t.ok(msg.body.toString().startsWith('v=0\r\n'))
})

t.test('RFC 4475 3.1.1.3, % escaping in URIs', async (t) => {
  const msg = decoded(rfc4475('esc01')) as SipRequest
  t.equal(unescapeUser(parseUri(msg.uri)!.user!), 'sips:user@example.com')
  t.equal(unescapeUser(parseNameAddr(getHeader(msg, 'To')!)!.uri.user!), 'user')
  t.equal(unescapeUser(parseNameAddr(getHeader(msg, 'From')!)!.uri.user!), 'I have spaces')
  t.equal(getHeader(msg, 'Content-Type'), 'application/sdp', 'compact c')
})

t.test('RFC 4475 valid messages decode', async (t) => {
  const valid: [string, string][] = [
    ['lwsdisp', '3.1.1.6 no LWS between display name and <'],
    ['semiuri', '3.1.1.9 semicolons in the user part'],
    ['transports', '3.1.1.10 unknown transports'],
    ['unreason', '3.1.1.12 unusual reason phrase'],
    ['noreason', '3.1.1.13 empty reason phrase'],
  ]
  for (const [name, title] of valid) t.ok(decodeSipMessage(rfc4475(name)).ok, title)
  t.equal(parseUri((decoded(rfc4475('semiuri')) as SipRequest).uri)!.user, 'user;par=u%40example.net')
  t.equal(parseNameAddr(getHeader(decoded(rfc4475('lwsdisp')), 'From')!)!.displayName, 'caller')
  t.same(
    getHeaderValues(decoded(rfc4475('transports')), 'Via')!.map((v) => parseVia(v)!.transport),
    ['UDP', 'SCTP', 'TLS', 'UNKNOWN', 'TCP'],
  )
  const noreason = decoded(rfc4475('noreason'))
  t.same(
    [noreason.kind, noreason.kind === 'response' && noreason.status, noreason.kind === 'response' && noreason.reason],
    ['response', 100, ''],
  )
  const unreason = decoded(rfc4475('unreason'))
  t.ok(unreason.kind === 'response' && unreason.reason.startsWith('= 2**3 * 5**2 но'), 'UTF-8 reason kept')
})

t.test('RFC 4475 invalid messages yield typed errors, never throws', async (t) => {
  const invalid: [string, string, string][] = [
    ['badinv01', '3.1.2.1 extraneous header field separators', 'bad_via'],
    ['clerr', '3.1.2.2 Content-Length larger than the message', 'truncated_body'],
    ['ncl', '3.1.2.3 negative Content-Length', 'bad_content_length'],
    ['scalar02', '3.1.2.4 CSeq over 2**31-1', 'bad_cseq'],
    ['quotbal', '3.1.2.6 unterminated quoted display name', 'bad_address'],
    ['ltgtruri', '3.1.2.7 <> around the Request-URI', 'bad_uri'],
    ['lwsruri', '3.1.2.8 LWS inside the Request-URI', 'bad_start_line'],
    ['lwsstart', '3.1.2.9 several SP between request line elements', 'bad_start_line'],
    ['trws', '3.1.2.10 SP at the end of the request line', 'bad_start_line'],
    ['badvers', '3.1.2.16 unknown protocol version', 'bad_version'],
    ['mismatch01', '3.1.2.17 start line and CSeq method differ', 'cseq_method_mismatch'],
    ['bigcode', '3.1.2.19 status code over 699', 'bad_status'],
    ['mcl01', '3.3.9 two different Content-Length values', 'bad_content_length'],
  ]
  for (const [name, title, code] of invalid) {
    const result = decodeSipMessage(rfc4475(name))
    t.equal(result.ok ? 'decoded' : result.error.code, code, title)
  }
  const badvers = decodeSipMessage(rfc4475('badvers'))
  t.equal(!badvers.ok && badvers.error.status, 505, 'a wrong version is answered 505')
  const clerr = decodeSipMessage(rfc4475('clerr'))
  t.ok(!clerr.ok && clerr.error.method === 'INVITE' && getHeader({ headers: clerr.error.headers! }, 'Call-ID'), 'what is needed for a 400')
})

const OPTIONS = [
  'OPTIONS sip:gw.example.com SIP/2.0',
  'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds;rport',
  'Max-Forwards: 70',
  'To: <sip:gw.example.com>',
  'From: "Trunk" <sip:probe@carrier.example.net>;tag=1928301774',
  'Call-ID: a84b4c76e66710',
  'CSeq: 63104 OPTIONS',
  'Content-Length: 0',
  '',
  '',
].join('\r\n')

t.test('encode writes CRLF lines and the real Content-Length; decode(encode(m)) is m', async (t) => {
  const msg = decoded(OPTIONS)
  const body = Buffer.from('hello')
  const withBody: SipMessage = { ...msg, headers: [...msg.headers, { name: 'Content-Type', value: 'text/plain' }], body }
  const wire = encodeSipMessage(withBody)
  t.match(wire.toString(), /^OPTIONS sip:gw\.example\.com SIP\/2\.0\r\nVia: /)
  t.match(wire.toString(), /\r\nContent-Length: 5\r\n\r\nhello$/)
  t.equal(wire.toString().match(/Content-Length/g)?.length, 1, 'the stale Content-Length: 0 is not written')
  const again = decoded(wire)
  t.same(
    again.headers.filter((h) => h.name !== 'Content-Length'),
    withBody.headers.filter((h) => h.name !== 'Content-Length'),
  )
  t.same(again.body, body)

  const response: SipMessage = { kind: 'response', status: 200, reason: 'OK', headers: msg.headers, body: Buffer.alloc(0) }
  const decodedResponse = decoded(encodeSipMessage(response))
  t.same([decodedResponse.kind, decodedResponse.kind === 'response' && decodedResponse.status], ['response', 200])
})

t.test('datagram framing: bytes after Content-Length are dropped, a missing Content-Length takes the rest', async (t) => {
  const extra = decoded(`${OPTIONS.replace('Content-Length: 0', 'Content-Length: 2')}hiJUNK`)
  t.equal(extra.body.toString(), 'hi')
  const none = decoded(`${OPTIONS.replace('Content-Length: 0\r\n', '')}body`)
  t.equal(none.body.toString(), 'body')
  t.equal(decoded(`\r\n\r\n${OPTIONS}`).kind, 'request', 'leading CRLFs are ignored')
})

t.test('bounded: size, header count, garbage and every truncation return an error, never a throw', async (t) => {
  const big = decodeSipMessage(Buffer.alloc(70_000, 0x41))
  t.equal(!big.ok && big.error.code, 'too_large')
  t.equal(!big.ok && big.error.status, 513)
  const many = OPTIONS.replace('Max-Forwards: 70', Array.from({ length: MAX_HEADERS + 1 }, (_, i) => `X-H${i}: ${i}`).join('\r\n'))
  const tooMany = decodeSipMessage(Buffer.from(many))
  t.equal(!tooMany.ok && tooMany.error.code, 'too_many_headers')
  for (const garbage of ['', '\r\n\r\n', 'hello\r\n\r\n', '\u0000\u0001\u0002\r\n\r\n', 'INVITE\r\n\r\n', 'SIP/2.0 abc OK\r\n\r\n']) {
    t.notOk(decodeSipMessage(Buffer.from(garbage)).ok, JSON.stringify(garbage))
  }
  const missing = decodeSipMessage(Buffer.from(OPTIONS.replace('Call-ID: a84b4c76e66710\r\n', '')))
  t.equal(!missing.ok && missing.error.code, 'missing_header')
  const bytes = Buffer.from(OPTIONS)
  let thrown = 0
  for (let cut = 0; cut < bytes.length; cut++) {
    try {
      decodeSipMessage(bytes.subarray(0, cut))
    } catch {
      thrown++
    }
  }
  t.equal(thrown, 0, 'no prefix of a message throws')
})

t.test('URIs and name-addrs: ports, IPv6, params, tel:', async (t) => {
  const uri = parseUri('sip:+15551234567@[2001:db8::1]:5070;transport=tcp;lr')!
  t.same(
    [uri.user, uri.host, uri.port, uri.params.get('transport'), uri.params.get('lr')],
    ['+15551234567', '[2001:db8::1]', 5070, 'tcp', null],
  )
  t.equal(parseUri('sip:alice:secret@example.com')!.password, 'secret')
  t.equal(parseUri('tel:+15551234567;phone-context=example.com')!.user, '+15551234567')
  t.equal(parseUri('sip:host:99999'), null, 'port out of range')
  t.equal(parseUri('sip:'), null)
  t.equal(parseUri('nocolon'), null)
  const addr = parseNameAddr('Bob <sip:bob@biloxi.example.com;transport=tcp>;tag=a6c85cf')!
  t.same([addr.displayName, addr.uri.params.get('transport'), addr.params.get('tag')], ['Bob', 'tcp', 'a6c85cf'])
  t.equal(parseNameAddr('"unterminated <sip:x@y>'), null)
  t.equal(parseVia('SIP/2.0/UDP host;branch='), null, 'an empty branch')
  t.equal(parseCSeq('4294967296 INVITE'), null, 'over 2**31-1')
})

t.test('stream framer: split and coalesced chunks, keep-alives, bounds', async (t) => {
  const one = Buffer.from(`${OPTIONS.replace('Content-Length: 0', 'Content-Length: 4')}abcd`)
  const framer = new SipStreamFramer()
  const wire = Buffer.concat([Buffer.from('\r\n\r\n'), one, Buffer.from('\r\n'), one])
  const results = []
  for (let i = 0; i < wire.length; i += 7) results.push(...framer.push(wire.subarray(i, i + 7)))
  t.equal(results.length, 2, 'two messages from 7-byte chunks')
  t.ok(results.every((r) => r.ok && r.message.body.toString() === 'abcd'))
  t.equal(framer.buffered, 0)

  const coalesced = new SipStreamFramer().push(Buffer.concat([one, one, one]))
  t.equal(coalesced.length, 3, 'three messages in one chunk')

  const noLength = new SipStreamFramer()
  const r = noLength.push(Buffer.from(OPTIONS.replace('Content-Length: 0\r\n', '')))
  t.equal(r.length === 1 && !r[0]!.ok && r[0]!.error.code, 'bad_content_length', 'Content-Length is mandatory on a stream')
  t.ok(noLength.failed)
  t.same(noLength.push(one), [], 'a failed stream yields nothing more')

  const flood = new SipStreamFramer({ maxBytes: 1024 })
  t.same(flood.push(Buffer.alloc(1000, 0x41)), [], 'waits for the rest')
  const over = flood.push(Buffer.alloc(100, 0x41))
  t.equal(over.length === 1 && !over[0]!.ok && over[0]!.error.code, 'too_large', 'a header section past the limit fails')
  t.equal(flood.buffered, 0, 'and frees its buffer')

  const huge = new SipStreamFramer({ maxBytes: 1024 }).push(Buffer.from(OPTIONS.replace('Content-Length: 0', 'Content-Length: 5000')))
  t.equal(huge.length === 1 && !huge[0]!.ok && huge[0]!.error.code, 'too_large', 'a declared body past the limit fails at once')
})

t.test('mutated torture messages never throw, from the datagram decoder or the stream framer', async (t) => {
  const names = ['wsinv', 'esc01', 'unreason', 'badinv01', 'clerr', 'quotbal', 'mcl01', 'scalar02']
  // A fixed xorshift sequence: the same mutations on every run.
  let seed = 0x9e3779b9
  const next = (): number => {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    return seed >>> 0
  }
  const specials = [0x0d, 0x0a, 0x20, 0x3a, 0x3b, 0x2c, 0x22, 0x3c, 0x3e, 0x00, 0xff, 0x5c]
  let decoded = 0
  let thrown = 0
  for (const name of names) {
    const original = rfc4475(name)
    for (let i = 0; i < 300; i++) {
      const bytes = Buffer.from(original)
      for (let k = 0; k < 1 + (next() % 4); k++) bytes[next() % bytes.length] = specials[next() % specials.length]!
      const cut = bytes.subarray(0, next() % 4 === 0 ? next() % bytes.length : bytes.length)
      try {
        if (decodeSipMessage(cut).ok) decoded++
        new SipStreamFramer().push(cut)
      } catch {
        thrown++
      }
    }
  }
  t.equal(thrown, 0, '2,400 mutated messages')
  t.ok(decoded > 0, `some mutations still decode (${decoded}), so the mutations are not all fatal at the first byte`)
})
