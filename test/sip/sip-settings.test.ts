import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { ConfigError, loadConfig } from '../../server/config.js'
import { selfSignedCertificate } from '../helpers/tls-cert.js'

t.test('SIP is off without SIP_PORT; its settings and defaults with it', async (t) => {
  t.equal(loadConfig({}).sip, undefined)
  t.same(loadConfig({ SIP_PORT: '5060' }).sip, {
    port: 5060,
    host: '0.0.0.0',
    publicHost: 'localhost',
    rtpPortMin: 10_000,
    rtpPortMax: 20_000,
    tls: undefined,
    tlsCa: undefined,
    mediaTimeoutS: 30,
    comfortNoise: true,
  })
  const c = loadConfig({
    SIP_PORT: '5080',
    SIP_HOST: '10.0.0.5',
    PUBLIC_URL: 'https://gw.example.com/voice',
    RTP_PORT_MIN: '40000',
    RTP_PORT_MAX: '40100',
  })
  t.same(c.sip, {
    port: 5080,
    host: '10.0.0.5',
    publicHost: 'gw.example.com',
    rtpPortMin: 40_000,
    rtpPortMax: 40_100,
    tls: undefined,
    tlsCa: undefined,
    mediaTimeoutS: 30,
    comfortNoise: true,
  })
  t.equal(loadConfig({ SIP_PORT: '5060', SIP_PUBLIC_HOST: '203.0.113.7' }).sip?.publicHost, '203.0.113.7')
  t.equal(loadConfig({ SIP_PORT: '0' }).sip?.port, 0, 'SIP_PORT=0: a free port, as PORT=0')
  t.equal(loadConfig({ SIP_PORT: '5060', PUBLIC_URL: 'http://[2001:db8::1]:8080' }).sip?.publicHost, '2001:db8::1')
})

t.test('an odd RTP_PORT_MAX or RTP_PORT_MIN starts, using the even ports inside, and says so once', async (t) => {
  const c = loadConfig({ SIP_PORT: '5060', RTP_PORT_MAX: '19999' })
  t.equal(c.sip?.rtpPortMax, 19_999)
  t.same(
    c.warnings.filter((w) => w.includes('RTP_PORT')),
    ['RTP_PORT_MIN..RTP_PORT_MAX (10000..19999) has an odd bound: RTP uses the even ports 10000..19998, RTCP the odd port above each'],
  )
  const odd = loadConfig({ SIP_PORT: '5060', RTP_PORT_MIN: '10001', RTP_PORT_MAX: '10005' })
  t.match(odd.warnings, [/the even ports 10002\.\.10004, RTCP/])
  t.same(
    loadConfig({ SIP_PORT: '5060' }).warnings.filter((w) => w.includes('RTP_PORT')),
    [],
    'an even range needs no word',
  )
})

t.test('SIP_MEDIA_TIMEOUT_S: 30 s by default, 0 turns it off, whole seconds up to an hour', async (t) => {
  t.equal(loadConfig({ SIP_PORT: '5060', SIP_MEDIA_TIMEOUT_S: '0' }).sip?.mediaTimeoutS, 0)
  t.equal(loadConfig({ SIP_PORT: '5060', SIP_MEDIA_TIMEOUT_S: '2' }).sip?.mediaTimeoutS, 2)
  t.throws(() => loadConfig({ SIP_MEDIA_TIMEOUT_S: '-1' }), /^SIP_MEDIA_TIMEOUT_S: must be/)
  t.throws(() => loadConfig({ SIP_MEDIA_TIMEOUT_S: '3601' }), /^SIP_MEDIA_TIMEOUT_S: must be between 0 and 3600/)
  t.throws(() => loadConfig({ SIP_MEDIA_TIMEOUT_S: 'soon' }), /^SIP_MEDIA_TIMEOUT_S: must be a whole number/)
})

t.test('SIP_COMFORT_NOISE: on by default, 0/false/no turns it off, anything else is named', async (t) => {
  t.equal(loadConfig({ SIP_PORT: '5060' }).sip?.comfortNoise, true)
  t.equal(loadConfig({ SIP_PORT: '5060', SIP_COMFORT_NOISE: '0' }).sip?.comfortNoise, false)
  t.equal(loadConfig({ SIP_PORT: '5060', SIP_COMFORT_NOISE: 'yes' }).sip?.comfortNoise, true)
  t.throws(
    () => loadConfig({ SIP_PORT: '5060', SIP_COMFORT_NOISE: 'sometimes' }),
    /^SIP_COMFORT_NOISE: must be 1\/true\/yes or 0\/false\/no/,
  )
})

const bad: [Record<string, string>, string, RegExp][] = [
  [{ SIP_PORT: 'sip' }, 'SIP_PORT', /^SIP_PORT: must be a whole number/],
  [{ SIP_PORT: '-1' }, 'SIP_PORT', /^SIP_PORT: must be/],
  [{ SIP_PORT: '70000' }, 'SIP_PORT', /^SIP_PORT: must be between 0 and 65535/],
  [{ SIP_PORT: '5060', SIP_HOST: 'a b' }, 'SIP_HOST', /^SIP_HOST: is not a host/],
  [{ SIP_PUBLIC_HOST: 'sip://x' }, 'SIP_PUBLIC_HOST', /^SIP_PUBLIC_HOST: is not a host/],
  [{ RTP_PORT_MIN: '10001', RTP_PORT_MAX: '10002' }, 'RTP_PORT_MAX', /^RTP_PORT_MAX: leaves no even port with its odd neighbour/],
  [{ RTP_PORT_MIN: '20000', RTP_PORT_MAX: '10000' }, 'RTP_PORT_MAX', /^RTP_PORT_MAX: must be above RTP_PORT_MIN/],
  [{ RTP_PORT_MIN: '80' }, 'RTP_PORT_MIN', /^RTP_PORT_MIN: must be between 1024 and 65534/],
  [{ RTP_PORT_MAX: 'many' }, 'RTP_PORT_MAX', /^RTP_PORT_MAX: must be a whole number/],
]

t.test('a bad SIP setting stops start-up with a message naming the variable, even with SIP off', async (t) => {
  for (const [env, variable, message] of bad) {
    let thrown: unknown
    try {
      loadConfig(env)
    } catch (e) {
      thrown = e
    }
    t.ok(thrown instanceof ConfigError, `${JSON.stringify(env)} is refused`)
    t.equal((thrown as ConfigError).variable, variable)
    t.match((thrown as ConfigError).message, message)
  }
})

/** Runs loadConfig and returns the ConfigError it throws (fails the test when none). */
function refusal(t: Test, env: Record<string, string>): ConfigError {
  try {
    loadConfig(env)
  } catch (e) {
    t.ok(e instanceof ConfigError, `${JSON.stringify(env)} is refused with a ConfigError`)
    return e as ConfigError
  }
  t.fail(`${JSON.stringify(env)} was accepted`)
  return new ConfigError('none', 'accepted')
}

t.test('SIP over TLS: the port, certificate and key read at start-up; SIP_TLS_CA trusted for trunks', async (t) => {
  const own = selfSignedCertificate(t)
  const ca = selfSignedCertificate(t, 'DNS:trunk.example.net')
  const sip = loadConfig({ SIP_PORT: '5060', SIP_TLS_PORT: '5061', SIP_TLS_CERT: own.certPath, SIP_TLS_KEY: own.keyPath }).sip
  t.same(sip?.tls, { port: 5061, cert: own.cert, key: own.key })
  t.equal(sip?.tlsCa, undefined)
  t.equal(loadConfig({ SIP_PORT: '0', SIP_TLS_PORT: '0', SIP_TLS_CERT: own.certPath, SIP_TLS_KEY: own.keyPath }).sip?.tls?.port, 0)
  t.equal(loadConfig({ SIP_PORT: '5060', SIP_TLS_CA: ca.certPath }).sip?.tlsCa, ca.cert, 'a CA without a TLS listener of ours')
})

t.test('a bad TLS setting stops start-up naming the variable', async (t) => {
  const own = selfSignedCertificate(t)
  const other = selfSignedCertificate(t)
  const dir = join(own.certPath, '..')
  const garbage = join(dir, 'garbage.pem')
  writeFileSync(garbage, '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n')
  const notPem = join(dir, 'not.pem')
  writeFileSync(notPem, 'hello\n')
  const tls = { SIP_PORT: '5060', SIP_TLS_PORT: '5061' }
  const cases: [Record<string, string>, string, RegExp][] = [
    [{ ...tls, SIP_TLS_KEY: own.keyPath }, 'SIP_TLS_CERT', /^SIP_TLS_CERT: is required with SIP_TLS_PORT/],
    [{ ...tls, SIP_TLS_CERT: own.certPath }, 'SIP_TLS_KEY', /^SIP_TLS_KEY: is required with SIP_TLS_PORT/],
    [{ ...tls, SIP_TLS_CERT: join(dir, 'missing.pem'), SIP_TLS_KEY: own.keyPath }, 'SIP_TLS_CERT', /^SIP_TLS_CERT: cannot be read: ENOENT/],
    [{ ...tls, SIP_TLS_CERT: own.certPath, SIP_TLS_KEY: dir }, 'SIP_TLS_KEY', /^SIP_TLS_KEY: cannot be read: EISDIR/],
    [{ ...tls, SIP_TLS_CERT: notPem, SIP_TLS_KEY: own.keyPath }, 'SIP_TLS_CERT', /^SIP_TLS_CERT: holds no PEM certificate/],
    [{ ...tls, SIP_TLS_CERT: garbage, SIP_TLS_KEY: own.keyPath }, 'SIP_TLS_CERT', /^SIP_TLS_CERT: holds a certificate that does not parse/],
    [{ ...tls, SIP_TLS_CERT: own.certPath, SIP_TLS_KEY: own.certPath }, 'SIP_TLS_KEY', /^SIP_TLS_KEY: is not a PEM private key/],
    [{ ...tls, SIP_TLS_CERT: own.certPath, SIP_TLS_KEY: other.keyPath }, 'SIP_TLS_KEY', /^SIP_TLS_KEY: does not match SIP_TLS_CERT/],
    [{ ...tls, SIP_TLS_PORT: 'tls' }, 'SIP_TLS_PORT', /^SIP_TLS_PORT: must be a whole number/],
    [
      { ...tls, SIP_TLS_PORT: '5060', SIP_TLS_CERT: own.certPath, SIP_TLS_KEY: own.keyPath },
      'SIP_TLS_PORT',
      /^SIP_TLS_PORT: must differ from SIP_PORT/,
    ],
    [
      { SIP_TLS_PORT: '5061', SIP_TLS_CERT: own.certPath, SIP_TLS_KEY: own.keyPath },
      'SIP_TLS_PORT',
      /^SIP_TLS_PORT: is set but SIP_PORT is not/,
    ],
    [{ SIP_PORT: '5060', SIP_TLS_CERT: own.certPath }, 'SIP_TLS_CERT', /^SIP_TLS_CERT: is set but SIP_TLS_PORT is not/],
    [{ SIP_PORT: '5060', SIP_TLS_CA: notPem }, 'SIP_TLS_CA', /^SIP_TLS_CA: holds no PEM certificate/],
    [{ SIP_PORT: '5060', SIP_TLS_CA: join(dir, 'missing.pem') }, 'SIP_TLS_CA', /^SIP_TLS_CA: cannot be read/],
  ]
  for (const [env, variable, message] of cases) {
    const e = refusal(t, env)
    t.equal(e.variable, variable)
    t.match(e.message, message)
  }
})
