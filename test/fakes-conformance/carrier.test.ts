// Twilio-compatible carrier: the documented Media Streams message, through our carrier media codec.
import t from 'tap'
import { TwilioMediaCodec } from '../../carrier/twilio/media-codec.js'
import { readFixture } from './replay-socket.js'

t.test('the documented connected message decodes to the connected event with its protocol and version', async (t) => {
  const { connected } = readFixture<{ connected: object }>('carrier/twilio-docs-messages.json')
  t.same(new TwilioMediaCodec().decode(JSON.stringify(connected)), { kind: 'connected', protocol: 'Call', version: '1.0.0' })
})
