// Twilio-compatible carrier: the documented Media Streams messages, through our carrier media codec.
import t from 'tap'
import { TwilioMediaCodec } from '../../carrier/twilio/media-codec.js'
import { readFixture } from './replay-socket.js'

type Messages = Record<'connected' | 'start' | 'media' | 'dtmf' | 'mark' | 'stop', Record<string, any>>
const docs = readFixture<Messages>('carrier/twilio-docs-messages.json')
const decode = (message: object) => new TwilioMediaCodec().decode(JSON.stringify(message))

t.test('the documented connected message decodes to the connected event with its protocol and version', async (t) => {
  t.same(decode(docs.connected), { kind: 'connected', protocol: 'Call', version: '1.0.0' })
})

t.test('the documented start message: the stream, the call, its tracks, custom parameters and format', async (t) => {
  t.same(decode(docs.start), {
    kind: 'start',
    sequenceNumber: 1,
    streamSid: 'MZ18ad3ab5a668481ce02b83e7395059f0',
    callSid: 'CA123',
    accountSid: 'AC123',
    tracks: ['inbound', 'outbound'],
    customParameters: { FirstName: 'Jane', LastName: 'Doe', RemoteParty: 'Bob' },
    mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
  })
})

t.test("the documented media message is the outbound track, not the caller's: ignored; its inbound twin is audio", async (t) => {
  t.equal(decode(docs.media), null, 'a <Connect><Stream> carries only the inbound track; anything else is not for the pipeline')
  const inbound = { ...docs.media, media: { ...docs.media.media, track: 'inbound' } }
  t.same(decode(inbound), {
    kind: 'media',
    sequenceNumber: 3,
    streamSid: 'MZ18ad3ab5a668481ce02b83e7395059f0',
    payload: Buffer.alloc(160, 0xff),
    timestamp: 5,
    chunk: 1,
    track: 'inbound',
  })
})

t.test('the documented dtmf, mark and stop messages', async (t) => {
  t.same(decode(docs.dtmf), {
    kind: 'dtmf',
    sequenceNumber: 5,
    streamSid: 'MZXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX',
    digit: '1',
    track: 'inbound_track',
  })
  t.same(decode(docs.mark), { kind: 'mark', sequenceNumber: 4, streamSid: 'MZ18ad3ab5a668481ce02b83e7395059f0', name: 'my label' })
  t.same(decode(docs.stop), {
    kind: 'stop',
    sequenceNumber: 5,
    streamSid: 'MZ18ad3ab5a668481ce02b83e7395059f0',
    callSid: 'CA123',
    accountSid: 'AC123',
  })
})
