import t from 'tap'
import { ConfigError, loadConfig } from '../../server/config.js'

t.test('SIP is off without SIP_PORT; its settings and defaults with it', async (t) => {
  t.equal(loadConfig({}).sip, undefined)
  t.same(loadConfig({ SIP_PORT: '5060' }).sip, {
    port: 5060,
    host: '0.0.0.0',
    publicHost: 'localhost',
    rtpPortMin: 10_000,
    rtpPortMax: 20_000,
  })
  const c = loadConfig({
    SIP_PORT: '5080',
    SIP_HOST: '10.0.0.5',
    PUBLIC_URL: 'https://gw.example.com/voice',
    RTP_PORT_MIN: '40000',
    RTP_PORT_MAX: '40100',
  })
  t.same(c.sip, { port: 5080, host: '10.0.0.5', publicHost: 'gw.example.com', rtpPortMin: 40_000, rtpPortMax: 40_100 })
  t.equal(loadConfig({ SIP_PORT: '5060', SIP_PUBLIC_HOST: '203.0.113.7' }).sip?.publicHost, '203.0.113.7')
  t.equal(loadConfig({ SIP_PORT: '0' }).sip?.port, 0, 'SIP_PORT=0: a free port, as PORT=0')
  t.equal(loadConfig({ SIP_PORT: '5060', PUBLIC_URL: 'http://[2001:db8::1]:8080' }).sip?.publicHost, '2001:db8::1')
})

const bad: [Record<string, string>, string, RegExp][] = [
  [{ SIP_PORT: 'sip' }, 'SIP_PORT', /^SIP_PORT: must be a whole number/],
  [{ SIP_PORT: '-1' }, 'SIP_PORT', /^SIP_PORT: must be/],
  [{ SIP_PORT: '70000' }, 'SIP_PORT', /^SIP_PORT: must be between 0 and 65535/],
  [{ SIP_PORT: '5060', SIP_HOST: 'a b' }, 'SIP_HOST', /^SIP_HOST: is not a host/],
  [{ SIP_PUBLIC_HOST: 'sip://x' }, 'SIP_PUBLIC_HOST', /^SIP_PUBLIC_HOST: is not a host/],
  [{ RTP_PORT_MIN: '10001' }, 'RTP_PORT_MIN', /^RTP_PORT_MIN: must be even/],
  [{ RTP_PORT_MAX: '20001' }, 'RTP_PORT_MAX', /^RTP_PORT_MAX: must be even/],
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
