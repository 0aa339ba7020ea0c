import t from 'tap'
import { authorize, DigestServer, digestHa1, digestResponse, pickChallenge } from '../../transports/sip/calls/digest-auth.js'
import { formatAuthHeader, parseAuthHeader } from '../../transports/sip/message/digest-header-codec.js'

t.test('RFC 2617 section 3.5 example: MD5 with qop=auth', async (t) => {
  const ha1 = digestHa1('MD5', 'Mufasa', 'testrealm@host.com', 'Circle Of Life')
  const response = digestResponse({
    algorithm: 'MD5',
    ha1,
    method: 'GET',
    uri: '/dir/index.html',
    nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093',
    qop: { nc: '00000001', cnonce: '0a4f113b' },
  })
  t.equal(response, '6629fae49393a05397450978507c4ef1')
})

t.test('RFC 7616 section 3.9.1 example: MD5 and SHA-256', async (t) => {
  const common = {
    method: 'GET',
    uri: '/dir/index.html',
    nonce: '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v',
    qop: { nc: '00000001', cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ' },
  }
  const md5 = digestResponse({ ...common, algorithm: 'MD5', ha1: digestHa1('MD5', 'Mufasa', 'http-auth@example.org', 'Circle of Life') })
  t.equal(md5, '8ca523f5e9506fed4657c9700eebdbec')
  const sha = digestResponse({
    ...common,
    algorithm: 'SHA-256',
    ha1: digestHa1('SHA-256', 'Mufasa', 'http-auth@example.org', 'Circle of Life'),
  })
  t.equal(sha, '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1')
})

t.test('header codec: quoted values with commas and escapes, tokens, repeats refused', async (t) => {
  const h = parseAuthHeader('Digest realm="a, \\"b\\"", nonce="n", algorithm=SHA-256, qop="auth,auth-int"')!
  t.equal(h.scheme, 'Digest')
  t.same(
    [...h.params],
    [
      ['realm', 'a, "b"'],
      ['nonce', 'n'],
      ['algorithm', 'SHA-256'],
      ['qop', 'auth,auth-int'],
    ],
  )
  t.equal(parseAuthHeader('Digest realm="a", realm="b"'), null)
  t.equal(parseAuthHeader('Digest'), null)
  t.equal(parseAuthHeader('Digest realm="unterminated'), null)
  t.equal(parseAuthHeader('Digest realm="a" nonce="b"'), null, 'a missing comma')
  t.equal(
    formatAuthHeader(
      'Digest',
      [
        ['qop', 'auth'],
        ['nc', '00000001'],
      ],
      'credentials',
    ),
    'Digest qop=auth, nc=00000001',
  )
  t.equal(formatAuthHeader('Digest', [['qop', 'auth']], 'challenge'), 'Digest qop="auth"')
})

t.test('client: picks the strongest answerable challenge and answers it', async (t) => {
  t.equal(pickChallenge(['Basic realm="x"', 'Digest realm="x", nonce="n", algorithm=MD5-sess']), null, 'nothing we support')
  t.equal(pickChallenge(['Digest realm="x", nonce="n", qop="auth-int"']), null, 'auth-int only')
  const both = pickChallenge([
    'Digest realm="carrier", nonce="abc", algorithm=MD5, qop="auth"',
    'Digest realm="carrier", nonce="abc", algorithm=SHA-256, qop="auth", opaque="o1"',
  ])!
  t.equal(both.algorithm, 'SHA-256')
  t.equal(both.opaque, 'o1')
  const legacy = pickChallenge(['Digest realm="asterisk",nonce="4b3c2d1e"'])!
  t.same([legacy.algorithm, legacy.qopAuth], ['MD5', false], 'no algorithm means MD5; no qop means RFC 2069 mode')

  const value = authorize(both, {
    username: 'trunk1',
    password: 's3cret',
    method: 'INVITE',
    uri: 'sip:+15551234567@carrier.example',
    cnonce: 'c0ffee',
  })
  const sent = parseAuthHeader(value)!
  const expected = digestResponse({
    algorithm: 'SHA-256',
    ha1: digestHa1('SHA-256', 'trunk1', 'carrier', 's3cret'),
    method: 'INVITE',
    uri: 'sip:+15551234567@carrier.example',
    nonce: 'abc',
    qop: { nc: '00000001', cnonce: 'c0ffee' },
  })
  t.same(Object.fromEntries(sent.params), {
    username: 'trunk1',
    realm: 'carrier',
    nonce: 'abc',
    uri: 'sip:+15551234567@carrier.example',
    response: expected,
    algorithm: 'SHA-256',
    qop: 'auth',
    nc: '00000001',
    cnonce: 'c0ffee',
    opaque: 'o1',
  })
  const noQop = parseAuthHeader(authorize(legacy, { username: 'u', password: 'p', method: 'INVITE', uri: 'sip:x@y' }))!
  t.equal(noQop.params.get('qop'), undefined)
  t.equal(
    noQop.params.get('response'),
    digestResponse({ algorithm: 'MD5', ha1: digestHa1('MD5', 'u', 'asterisk', 'p'), method: 'INVITE', uri: 'sip:x@y', nonce: '4b3c2d1e' }),
  )
})

t.test('server: challenge, then a client answer is checked; every wrong input is refused', async (t) => {
  let now = 1_700_000_000_000
  const server = new DigestServer({ realm: 'voxgate', secret: Buffer.from('0123456789abcdef'), nonceTtlMs: 60_000, now: () => now })
  const challenges = server.challenges()
  t.equal(challenges.length, 2)
  t.match(challenges[0], /^Digest realm="voxgate", nonce="[^"]+", algorithm=SHA-256, qop="auth"$/)
  const users = new Map([['pbx', { password: 'hunter2' }]])
  const lookup = (u: string) => users.get(u)
  const request = { method: 'INVITE', uri: 'sip:+15557654321@gw.example.com' }

  // Both challenges carry one nonce: the second answer on it counts up (nc 2), as a client reusing a nonce must.
  for (const [i, challenge] of challenges.entries()) {
    const picked = pickChallenge([challenge])!
    const value = authorize(picked, { username: 'pbx', password: 'hunter2', nc: i + 1, ...request })
    t.same(server.check(value, request, lookup), { ok: true, username: 'pbx' }, `${picked.algorithm} accepted`)
  }
  const picked = pickChallenge(challenges)!
  const good = authorize(picked, { username: 'pbx', password: 'hunter2', ...request })
  t.same(server.check(undefined, request, lookup), { ok: false, reason: 'missing' })
  t.same(server.check('Digest nonsense', request, lookup), { ok: false, reason: 'malformed' })
  t.same(server.check(authorize(picked, { username: 'pbx', password: 'wrong', ...request }), request, lookup), {
    ok: false,
    reason: 'bad_response',
  })
  t.same(server.check(authorize(picked, { username: 'nobody', password: 'hunter2', ...request }), request, lookup), {
    ok: false,
    reason: 'unknown_user',
  })
  t.same(server.check(good, { ...request, uri: 'sip:other@gw.example.com' }, lookup), { ok: false, reason: 'uri' })
  t.same(server.check(good, { ...request, method: 'BYE' }, lookup), { ok: false, reason: 'bad_response' }, 'the method is in the digest')
  t.same(server.check(good.replace('realm="voxgate"', 'realm="other"'), request, lookup), { ok: false, reason: 'realm' })
  const forged = authorize(
    { ...picked, nonce: `${now.toString(36)}.AAAAAAAAAAAAAAAAAAAAAA` },
    { username: 'pbx', password: 'hunter2', ...request },
  )
  t.same(server.check(forged, request, lookup), { ok: false, reason: 'bad_nonce' }, 'a nonce we did not sign')

  now += 61_000
  t.same(
    server.check(good, request, lookup),
    { ok: false, reason: 'stale_nonce', stale: true },
    'an old nonce with the right password is stale',
  )
  t.match(server.challenges({ stale: true })[0], /, stale=true$/)

  const hashed = new DigestServer({ realm: 'voxgate', secret: Buffer.from('k'), now: () => now })
  const stored = { ha1: { 'SHA-256': digestHa1('SHA-256', 'pbx', 'voxgate', 'hunter2') } }
  const fresh = pickChallenge(hashed.challenges())!
  t.same(
    hashed.check(authorize(fresh, { username: 'pbx', password: 'hunter2', ...request }), request, () => stored),
    { ok: true, username: 'pbx' },
    'HA1 stored instead of the password',
  )
  const md5 = pickChallenge([hashed.challenges()[1]!])!
  t.same(
    hashed.check(authorize(md5, { username: 'pbx', password: 'hunter2', ...request }), request, () => stored),
    { ok: false, reason: 'unknown_user' },
    'no MD5 HA1 stored',
  )
})
