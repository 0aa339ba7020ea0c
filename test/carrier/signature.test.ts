import { createHash, createHmac } from 'node:crypto'
import t from 'tap'
import {
  TwilioSignatureVerifier,
  computeSignature,
  expectedUrl,
  parseFormBody,
  validateSignature,
  validateSignatureWithBody,
} from '../../carrier/twilio/signature.js'

// Vectors are built by hand here, never with the module under test.
const hmac = (token: string, data: string): string => createHmac('sha1', token).update(data, 'utf8').digest('base64')
const sha256hex = (body: string): string => createHash('sha256').update(body, 'utf8').digest('hex')

const TOKEN = '12345'
const verifier = new TwilioSignatureVerifier()

t.test('published vector from the carrier docs', async (t) => {
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2'
  const params = {
    CallSid: 'CA1234567890ABCDE',
    Caller: '+14158675309',
    Digits: '1234',
    From: '+14158675309',
    To: '+18005551212',
  }
  const byHand = `${url}CallSidCA1234567890ABCDECaller+14158675309Digits1234From+14158675309To+18005551212`
  t.equal(hmac(TOKEN, byHand), 'RSOYDt4T1cUTdK1PDd93/VVr8B8=')
  t.ok(validateSignature(TOKEN, 'RSOYDt4T1cUTdK1PDd93/VVr8B8=', url, params))
  t.equal(computeSignature(TOKEN, url, params), 'RSOYDt4T1cUTdK1PDd93/VVr8B8=')
})

t.test('form params are sorted by name before signing', async (t) => {
  const url = 'https://gw.example.com/v1/agents/carrier/twiml'
  // Deliberately unsorted insertion order.
  const params = { To: '+15550002222', From: '+15550001111', Direction: 'inbound', AccountSid: 'AC1', CallSid: 'CA9' }
  const sig = hmac('tok', `${url}AccountSidAC1CallSidCA9DirectioninboundFrom+15550001111To+15550002222`)
  t.ok(validateSignature('tok', sig, url, params))
  const unsorted = hmac('tok', `${url}To+15550002222From+15550001111DirectioninboundAccountSidAC1CallSidCA9`)
  t.notOk(validateSignature('tok', unsorted, url, params))
  t.same(verifier.verify({ url, signature: sig, params }, 'tok'), { ok: true })
})

t.test('repeated fields: each value, sorted', async (t) => {
  const url = 'https://gw.example.com/status'
  const params = { To: '+1555', StatusCallbackEvent: ['ringing', 'answered', 'initiated', 'completed'] }
  const sig = hmac(
    TOKEN,
    url +
      'StatusCallbackEventanswered' +
      'StatusCallbackEventcompleted' +
      'StatusCallbackEventinitiated' +
      'StatusCallbackEventringing' +
      'To+1555',
  )
  t.ok(validateSignature(TOKEN, sig, url, params))
  const form = parseFormBody(
    'To=%2B1555&StatusCallbackEvent=ringing&StatusCallbackEvent=answered' + '&StatusCallbackEvent=initiated&StatusCallbackEvent=completed',
  )
  t.same(form.StatusCallbackEvent, ['ringing', 'answered', 'initiated', 'completed'])
  t.ok(validateSignature(TOKEN, sig, url, form))
})

t.test('form values are signed decoded (+ is a space)', async (t) => {
  const url = 'https://gw.example.com/hook'
  const form = parseFormBody(Buffer.from('CallerName=Jane+Doe&Note=a%26b%3Dc'))
  t.same({ ...form }, { CallerName: 'Jane Doe', Note: 'a&b=c' })
  const sig = hmac(TOKEN, `${url}CallerNameJane DoeNotea&b=c`)
  t.ok(validateSignature(TOKEN, sig, url, form))
})

t.test('default port: URL with and without :443 / :80 both accepted', async (t) => {
  const params = { CallSid: 'CA1' }
  const withPort = hmac(TOKEN, 'https://gw.example.com:443/v1/agents/carrier/twiml' + 'CallSidCA1')
  const without = hmac(TOKEN, 'https://gw.example.com/v1/agents/carrier/twiml' + 'CallSidCA1')
  for (const url of ['https://gw.example.com/v1/agents/carrier/twiml', 'https://gw.example.com:443/v1/agents/carrier/twiml']) {
    t.ok(validateSignature(TOKEN, withPort, url, params), `signed with :443, checked against ${url}`)
    t.ok(validateSignature(TOKEN, without, url, params), `signed without port, checked against ${url}`)
  }
  const http80 = hmac(TOKEN, 'http://gw.example.com:80/hook' + 'CallSidCA1')
  t.ok(validateSignature(TOKEN, http80, 'http://gw.example.com/hook', params))
  // :443 on http is not that scheme's default port.
  const wrongDefault = hmac(TOKEN, 'http://gw.example.com:443/hook' + 'CallSidCA1')
  t.notOk(validateSignature(TOKEN, wrongDefault, 'http://gw.example.com/hook', params))
})

t.test('a non-default port stays part of the URL', async (t) => {
  const params = { CallSid: 'CA1' }
  const url = 'https://gw.example.com:8443/v1/agents/carrier/twiml'
  const signedWithPort = hmac(TOKEN, `${url}CallSidCA1`)
  t.ok(validateSignature(TOKEN, signedWithPort, url, params))
  t.notOk(validateSignature(TOKEN, signedWithPort, 'https://gw.example.com/v1/agents/carrier/twiml', params))
  const signedWithoutPort = hmac(TOKEN, 'https://gw.example.com/v1/agents/carrier/twiml' + 'CallSidCA1')
  t.notOk(validateSignature(TOKEN, signedWithoutPort, url, params))
  t.equal(expectedUrl('http://127.0.0.1:3000', '/v1/x?y=1'), 'http://127.0.0.1:3000/v1/x?y=1')
})

t.test('query string is part of the signed URL', async (t) => {
  const url = 'https://gw.example.com/v1/agents/carrier/twiml?agent=agt_1&mode=a%20b'
  const sig = hmac(TOKEN, `${url}From+1555`)
  t.ok(validateSignature(TOKEN, sig, url, { From: '+1555' }))
  t.notOk(validateSignature(TOKEN, sig, 'https://gw.example.com/v1/agents/carrier/twiml?agent=agt_2&mode=a%20b', { From: '+1555' }))
  t.notOk(validateSignature(TOKEN, sig, 'https://gw.example.com/v1/agents/carrier/twiml', { From: '+1555' }))
})

t.test('URL comes from PUBLIC_URL, not the Host header a proxy rewrote', async (t) => {
  const publicUrl = 'https://gw.example.com/voice'
  const pathAndQuery = '/v1/agents/carrier/twiml?region=eu'
  const carrierCalled = 'https://gw.example.com/voice/v1/agents/carrier/twiml?region=eu'
  const form = { CallSid: 'CA1', From: '+15550001111', To: '+15550002222' }
  const sig = hmac(TOKEN, `${carrierCalled}CallSidCA1From+15550001111To+15550002222`)

  // What a handler would rebuild from the request behind a TLS-terminating proxy.
  const hostHeader = '10.0.0.7:3000'
  const fromHost = `http://${hostHeader}${pathAndQuery}`
  t.notOk(validateSignature(TOKEN, sig, fromHost, form), 'Host-derived URL fails')
  t.same(verifier.verify({ url: fromHost, signature: sig, params: form }, TOKEN), { ok: false, reason: 'bad_signature' })

  const url = expectedUrl(publicUrl, pathAndQuery)
  t.equal(url, carrierCalled)
  t.same(verifier.verify({ url, signature: sig, params: form }, TOKEN), { ok: true }, 'PUBLIC_URL-derived URL passes')
})

t.test('expectedUrl joins PUBLIC_URL and the path without double slashes', async (t) => {
  t.equal(expectedUrl('https://gw.example.com', '/v1/a'), 'https://gw.example.com/v1/a')
  t.equal(expectedUrl('https://gw.example.com/', '/v1/a'), 'https://gw.example.com/v1/a')
  t.equal(expectedUrl('https://gw.example.com/voice/', '/v1/a?b=1'), 'https://gw.example.com/voice/v1/a?b=1')
  t.equal(expectedUrl('https://gw.example.com/voice//', '//v1/a'), 'https://gw.example.com/voice/v1/a')
  t.equal(expectedUrl('https://gw.example.com/voice', 'v1/a'), 'https://gw.example.com/voice/v1/a')
  t.equal(expectedUrl('https://gw.example.com:443/voice', '/v1/a'), 'https://gw.example.com/voice/v1/a')
  t.equal(expectedUrl('http://localhost:3000', '/'), 'http://localhost:3000/')
})

t.test('JSON body signed through bodySHA256', async (t) => {
  const body = '{"CallSid":"CA1234567890ABCDE","Caller":"+12349013030"}'
  const url = `https://example.com/myapp?bodySHA256=${sha256hex(body)}`
  t.equal(sha256hex(body), '5ccde7145dfb8f56479710896586cb9d5911809d83afbe34627818790db0aec9', 'published body hash')
  // The URL alone (with its query) is signed; the JSON fields are not.
  const sig = hmac(TOKEN, url)
  t.same(validateSignatureWithBody(TOKEN, sig, url, body), { ok: true })
  t.same(verifier.verify({ url, signature: sig, params: {}, rawBody: Buffer.from(body) }, TOKEN), { ok: true })

  const tampered = body.replace('+12349013030', '+19999999999')
  t.same(verifier.verify({ url, signature: sig, params: {}, rawBody: tampered }, TOKEN), { ok: false, reason: 'bad_body_hash' })

  const otherHashUrl = `https://example.com/myapp?bodySHA256=${sha256hex(tampered)}`
  t.same(
    verifier.verify({ url: otherHashUrl, signature: sig, params: {}, rawBody: tampered }, TOKEN),
    { ok: false, reason: 'bad_signature' },
    'swapping the hash in the URL breaks the URL signature',
  )
  t.same(verifier.verify({ url, signature: sig, params: {} }, TOKEN), { ok: false, reason: 'bad_body_hash' }, 'missing body')
})

t.test('wrong token, missing or garbled signature', async (t) => {
  const url = 'https://gw.example.com/v1/agents/carrier/twiml'
  const params = { CallSid: 'CA1' }
  const sig = hmac('right-token', `${url}CallSidCA1`)
  t.same(verifier.verify({ url, signature: sig, params }, 'right-token'), { ok: true })
  t.same(verifier.verify({ url, signature: sig, params }, 'wrong-token'), { ok: false, reason: 'bad_signature' })
  t.same(verifier.verify({ url, signature: undefined, params }, 'right-token'), { ok: false, reason: 'missing_signature' })
  t.same(verifier.verify({ url, signature: '', params }, 'right-token'), { ok: false, reason: 'missing_signature' })
  t.same(verifier.verify({ url, signature: 'short', params }, 'right-token'), { ok: false, reason: 'bad_signature' })
  t.same(verifier.verify({ url, signature: `${sig}x`, params }, 'right-token'), { ok: false, reason: 'bad_signature' })
  t.same(verifier.verify({ url, signature: sig, params: { CallSid: 'CA2' } }, 'right-token'), {
    ok: false,
    reason: 'bad_signature',
  })
  t.same(verifier.verify({ url: 'not a url', signature: sig, params }, 'right-token'), { ok: false, reason: 'bad_url' })
  t.same(verifier.headerNames, ['x-twilio-signature', 'x-carrier-signature'], "Twilio's own header, then the SPEC's")
})
