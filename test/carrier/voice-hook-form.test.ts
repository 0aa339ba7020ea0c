import t from 'tap'
import { TwilioSignatureVerifier, parseFormBody } from '../../carrier/twilio/signature.js'
import { parseVoiceHook } from '../../carrier/twilio/voice-hook.js'

t.test('reads a recorded inbound voice hook', async (t) => {
  const body =
    'AccountSid=AC0b5d7c1f9e3a4b6c8d0e2f4a6b8c0d2e&ApiVersion=2010-04-01&CallSid=CA3f1e2d4c6b8a0f9e7d5c3b1a2f4e6d8c' +
    '&CallStatus=ringing&Called=%2B15550002222&CalledCountry=US&Caller=%2B442071838750&Direction=inbound' +
    '&From=%2B442071838750&FromCountry=gb&To=%2B15550002222&ToCountry=US'
  t.strictSame(parseVoiceHook(parseFormBody(body)), {
    callSid: 'CA3f1e2d4c6b8a0f9e7d5c3b1a2f4e6d8c',
    direction: 'inbound',
    outbound: false,
    from: '+442071838750',
    to: '+15550002222',
    fromCountry: 'GB',
    toCountry: 'US',
    status: 'ringing',
  })
})

t.test('outbound directions, blank and odd fields', async (t) => {
  t.equal(parseVoiceHook({ Direction: 'outbound-api', CallSid: 'CA1' }).outbound, true)
  t.equal(parseVoiceHook({ Direction: 'outbound-dial' }).outbound, true)
  t.equal(parseVoiceHook({}).outbound, false)
  const odd = parseVoiceHook({ CallSid: '  ', From: ' anonymous ', FromCountry: 'GBR', ToCountry: '', CallStatus: 'dialling' })
  t.strictSame(odd, {
    callSid: undefined,
    direction: undefined,
    outbound: false,
    from: 'anonymous',
    to: undefined,
    fromCountry: undefined,
    toCountry: undefined,
    status: undefined,
  })
  t.equal(parseVoiceHook({ CallSid: ['CA1', 'CA2'], CallStatus: 'In-Progress' }).callSid, 'CA1')
  t.equal(parseVoiceHook({ CallSid: 'CA1', CallStatus: 'In-Progress' }).status, 'in-progress')
})

t.test('the verifier builds the signed URL from PUBLIC_URL and refuses an unsigned JSON body first', async (t) => {
  const verifier = new TwilioSignatureVerifier()
  t.equal(
    verifier.requestUrl('https://gw.example.com/voice/', '/v1/agents/carrier/twiml?x=1'),
    'https://gw.example.com/voice/v1/agents/carrier/twiml?x=1',
  )
  const url = 'https://gw.example.com/v1/agents/carrier/twiml'
  t.match(verifier.verify({ url, signature: undefined, params: {}, rawBody: '{}', bodyKind: 'json' }, 'tok'), {
    ok: false,
    reason: 'unsigned_body',
    detail: /bodySHA256/,
  })
  t.match(verifier.verify({ url, signature: undefined, params: {}, rawBody: '', bodyKind: 'form' }, 'tok'), {
    ok: false,
    reason: 'missing_signature',
  })
  t.match(verifier.verify({ url: `${url}?bodySHA256=00`, signature: 'x', params: {}, rawBody: '{}', bodyKind: 'json' }, 'tok'), {
    ok: false,
    reason: 'bad_signature',
  })
})
