import { rootCertificates } from 'node:tls'
import t from 'tap'
import { contactFor, hostForUri, trunkTlsOptions, viaFor } from '../../transports/sip/endpoint/sip-tls.js'

t.test('our Contact per transport: TLS names its own port, sips: when the request was sips:', async (t) => {
  const ports = { sip: 5060, tls: 5061 }
  t.equal(contactFor('gw.example.com', 'udp', ports), 'sip:gw.example.com:5060')
  t.equal(contactFor('gw.example.com', 'tcp', ports), 'sip:gw.example.com:5060;transport=tcp')
  t.equal(contactFor('gw.example.com', 'tls', ports), 'sip:gw.example.com:5061;transport=tls')
  t.equal(contactFor('gw.example.com', 'tls', ports, true), 'sips:gw.example.com:5061')
  t.equal(
    contactFor('2001:db8::1', 'tls', { sip: 5060, tls: undefined }),
    'sip:[2001:db8::1]:5060;transport=tls',
    'no TLS listener: the SIP port',
  )
  t.same(viaFor('gw.example.com', 'tls', ports), { host: 'gw.example.com', port: 5061, transport: 'TLS' })
  t.same(viaFor('gw.example.com', 'tcp', ports), { host: 'gw.example.com', port: 5060, transport: 'TCP' })
  t.equal(hostForUri('[::1]'), '[::1]')
})

t.test("a trunk's TLS options: SNI for names only, SIP_TLS_CA added to the built-in CAs", async (t) => {
  t.same(trunkTlsOptions('trunk.example.net', undefined), { ca: undefined, servername: 'trunk.example.net' })
  t.equal(trunkTlsOptions('192.0.2.7', undefined).servername, undefined, 'no SNI for an address (RFC 6066)')
  t.equal(trunkTlsOptions('[2001:db8::7]', undefined).servername, undefined)
  const withCa = trunkTlsOptions('trunk.example.net', 'PEM')
  t.equal((withCa.ca as string[]).length, rootCertificates.length + 1)
  t.equal((withCa.ca as string[]).at(-1), 'PEM')
})
