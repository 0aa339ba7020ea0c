import t from 'tap'
import { decodeSipMessage } from '../../transports/sip/message/sip-message-codec.js'
import { getHeaderValues, type SipRequest } from '../../transports/sip/message/sip-message.js'
import { stampReceived } from '../../transports/sip/message/via-received.js'

const request = (via: string): SipRequest => {
  const text = [
    'OPTIONS sip:gw@192.0.2.1 SIP/2.0',
    `Via: ${via}`,
    'From: <sip:a@pbx.example.net>;tag=1',
    'To: <sip:gw@192.0.2.1>',
    'Call-ID: v@x',
    'CSeq: 1 OPTIONS',
    '',
    '',
  ].join('\r\n')
  const r = decodeSipMessage(Buffer.from(text))
  if (!r.ok || r.message.kind !== 'request') throw new Error('fixture does not decode')
  return r.message
}

t.test('sent-by is the source: no received; no rport asked: the Via port', async (t) => {
  const r = stampReceived(request('SIP/2.0/UDP 198.51.100.7:5070;branch=z9hG4bK1'), { address: '198.51.100.7', port: 40000 })
  t.same(r?.destination, { address: '198.51.100.7', port: 5070 })
  t.same(getHeaderValues(r!.request, 'Via'), ['SIP/2.0/UDP 198.51.100.7:5070;branch=z9hG4bK1'])
})

t.test('behind NAT with rport: received and rport filled, the answer goes to the source port', async (t) => {
  const r = stampReceived(request('SIP/2.0/UDP 10.0.0.5:5060;rport;branch=z9hG4bK2'), { address: '203.0.113.9', port: 61000 })
  t.same(r?.destination, { address: '203.0.113.9', port: 61000 })
  t.same(getHeaderValues(r!.request, 'Via'), ['SIP/2.0/UDP 10.0.0.5:5060;rport=61000;branch=z9hG4bK2;received=203.0.113.9'])
})

t.test('a host name sent-by without a port: received is the source, the port 5060; never a DNS name', async (t) => {
  const r = stampReceived(request('SIP/2.0/UDP pbx.example.net;branch=z9hG4bK3'), { address: '203.0.113.9', port: 61000 })
  t.same(r?.destination, { address: '203.0.113.9', port: 5060 })
})

t.test('IPv6: brackets do not count as a difference; only the top Via changes', async (t) => {
  const r = stampReceived(request('SIP/2.0/UDP [2001:db8::5]:5060;branch=z9hG4bK4, SIP/2.0/UDP proxy.example.net;branch=z9hG4bK5'), {
    address: '2001:db8::5',
    port: 5060,
  })
  t.same(getHeaderValues(r!.request, 'Via'), [
    'SIP/2.0/UDP [2001:db8::5]:5060;branch=z9hG4bK4',
    'SIP/2.0/UDP proxy.example.net;branch=z9hG4bK5',
  ])
})
