import t from 'tap'
import { loadConfig, ConfigError } from '../../server/config.js'

t.test('defaults on an empty environment', async (t) => {
  const c = loadConfig({})
  t.equal(c.port, 8080)
  t.equal(c.host, '0.0.0.0')
  t.equal(c.publicUrl, 'http://localhost:8080')
  t.equal(c.databaseUrl, undefined)
  t.match(c.dataDir, /\/data$/)
  t.equal(c.adminToken, undefined)
  t.equal(c.logLevel, 'info')
  t.equal(c.allowInsecureWebhooks, false)
  t.strictSame(c.webhookPolicy.trustedPrefixes, ['http://localhost:8080/tunnel/'], "the gateway's own tunnel addresses")
  t.equal(c.webhookPolicy.allowInsecureLoopback, false)
  t.equal(c.vendors['agent.llm'].url, 'https://api.openai.com/v1')
  t.equal(c.vendors['stt.vendor_a'].apiKey, undefined)
})

t.test('PUBLIC_URL follows PORT and trailing slashes are dropped', async (t) => {
  t.equal(loadConfig({ PORT: '3000' }).publicUrl, 'http://localhost:3000')
  t.strictSame(loadConfig({ PUBLIC_URL: 'https://gw.example.com/voice/' }).webhookPolicy.trustedPrefixes, [
    'https://gw.example.com/voice/tunnel/',
  ])
  t.equal(loadConfig({ PUBLIC_URL: 'https://gw.example.com/voice/' }).publicUrl, 'https://gw.example.com/voice')
})

t.test('vendor variables are read', async (t) => {
  const c = loadConfig({
    STT_VENDOR_A_URL: 'ws://127.0.0.1:9/',
    STT_VENDOR_A_API_KEY: 'k',
    LLM_BASE_URL: 'http://127.0.0.1:1/v1',
    LLM_API_KEY: 'x',
  })
  t.equal(c.vendors['stt.vendor_a'].url, 'ws://127.0.0.1:9')
  t.equal(c.vendors['stt.vendor_a'].apiKey, 'k')
  t.equal(c.vendors['agent.llm'].url, 'http://127.0.0.1:1/v1')
  t.equal(c.vendors['agent.llm'].apiKey, 'x')
})

const bad: [string, string, RegExp][] = [
  ['PORT', 'abc', /PORT: must be a whole number/],
  ['PORT', '70000', /PORT: must be between 0 and 65535/],
  ['PUBLIC_URL', 'not a url', /PUBLIC_URL: must be an absolute URL/],
  ['PUBLIC_URL', 'ftp://x', /PUBLIC_URL: must use http or https/],
  ['DATABASE_URL', 'mysql://x', /DATABASE_URL: must use postgres or postgresql/],
  ['LOG_LEVEL', 'loud', /LOG_LEVEL: must be one of/],
  ['ADMIN_TOKEN', 'short', /ADMIN_TOKEN: must be at least 16/],
  ['ALLOW_INSECURE_WEBHOOKS', 'maybe', /ALLOW_INSECURE_WEBHOOKS: must be/],
  ['STT_VENDOR_A_URL', 'https://x', /STT_VENDOR_A_URL: must use ws or wss/],
  ['USAGE_RATE_PER_MINUTE', '-1', /USAGE_RATE_PER_MINUTE: must be a number/],
  ['HOST', 'a b', /HOST: is not a host/],
  ['WORKERS', '0', /WORKERS: must be between 1 and 64/],
  ['WORKERS', '2', /WORKERS: more than 1 needs DATABASE_URL/],
]

t.test('WORKERS: 1 by default, more with a database server', async (t) => {
  t.equal(loadConfig({}).workers, 1)
  t.equal(loadConfig({ WORKERS: '3', DATABASE_URL: 'postgres://127.0.0.1/x' }).workers, 3)
})
for (const [name, value, re] of bad) {
  t.test(`invalid ${name}=${value} names the variable`, async (t) => {
    t.throws(() => loadConfig({ [name]: value }), re)
    try {
      loadConfig({ [name]: value })
    } catch (e) {
      t.ok(e instanceof ConfigError)
      t.equal((e as ConfigError).variable, name)
    }
  })
}

t.test('recording settings: DTMF masking on by default, retention off by default', async (t) => {
  const c = loadConfig({})
  t.equal(c.recordingDtmfMask, true)
  t.equal(c.recordingRetentionDays, undefined)
  const set = loadConfig({ RECORDING_DTMF_MASK: '0', RECORDING_RETENTION_DAYS: '30' })
  t.equal(set.recordingDtmfMask, false)
  t.equal(set.recordingRetentionDays, 30)
  t.throws(() => loadConfig({ RECORDING_RETENTION_DAYS: '0' }), /RECORDING_RETENTION_DAYS: must be between 1/)
  t.throws(() => loadConfig({ RECORDING_DTMF_MASK: 'maybe' }), /RECORDING_DTMF_MASK: must be/)
})

t.test("PGLITE_SHARED_BUFFERS_MB: unset keeps PGlite's own; a number of MB from 2; anything else names the variable", async (t) => {
  t.equal(loadConfig({}).pgliteSharedBuffersMb, undefined)
  t.equal(loadConfig({ PGLITE_SHARED_BUFFERS_MB: '16' }).pgliteSharedBuffersMb, 16)
  t.equal(loadConfig({ PGLITE_SHARED_BUFFERS_MB: '2' }).pgliteSharedBuffersMb, 2)
  t.throws(() => loadConfig({ PGLITE_SHARED_BUFFERS_MB: '1' }), /PGLITE_SHARED_BUFFERS_MB: must be between 2/)
  t.throws(() => loadConfig({ PGLITE_SHARED_BUFFERS_MB: '16MB' }), /PGLITE_SHARED_BUFFERS_MB/)
})

t.test('recording object store: off by default; the bucket turns it on; half settings are refused', async (t) => {
  t.equal(loadConfig({}).recordingObjectStore, undefined)
  t.same(loadConfig({ RECORDING_S3_BUCKET: 'calls-archive' }).recordingObjectStore, {
    bucket: 'calls-archive',
    endpoint: undefined,
    region: 'us-east-1',
    credentials: undefined,
    prefix: 'recordings/',
    urlTtlSeconds: 300,
  })
  const full = loadConfig({
    RECORDING_S3_BUCKET: 'calls',
    RECORDING_S3_ENDPOINT: 'http://127.0.0.1:9000',
    RECORDING_S3_REGION: 'eu-west-1',
    RECORDING_S3_ACCESS_KEY_ID: 'id',
    RECORDING_S3_SECRET_ACCESS_KEY: 'secret',
    RECORDING_S3_PREFIX: 'voice/',
    RECORDING_S3_URL_TTL_SECONDS: '60',
  }).recordingObjectStore
  t.match(full, { endpoint: 'http://127.0.0.1:9000', region: 'eu-west-1', prefix: 'voice/', urlTtlSeconds: 60 })
  t.same(full?.credentials, { accessKeyId: 'id', secretAccessKey: 'secret' })
  t.throws(() => loadConfig({ RECORDING_S3_ENDPOINT: 'http://x' }), /RECORDING_S3_ENDPOINT: is set but RECORDING_S3_BUCKET is not/)
  t.throws(() => loadConfig({ RECORDING_S3_BUCKET: 'Bad_Bucket' }), /RECORDING_S3_BUCKET: is not a bucket name/)
  t.throws(() => loadConfig({ RECORDING_S3_BUCKET: 'calls', RECORDING_S3_ACCESS_KEY_ID: 'id' }), /RECORDING_S3_SECRET_ACCESS_KEY: set both/)
  t.throws(() => loadConfig({ RECORDING_S3_BUCKET: 'calls', RECORDING_S3_URL_TTL_SECONDS: '5' }), /between 10/)
  t.throws(() => loadConfig({ RECORDING_S3_BUCKET: 'calls', RECORDING_S3_ENDPOINT: 'ftp://x' }), /RECORDING_S3_ENDPOINT: must use/)
})

t.test('REPLICA_URL: unset by default (the process works it out once listening), an http(s) URL when set', async (t) => {
  t.equal(loadConfig({}).replicaUrl, undefined)
  t.equal(loadConfig({ REPLICA_URL: 'http://10.0.0.7:3000/' }).replicaUrl, 'http://10.0.0.7:3000')
  t.throws(() => loadConfig({ REPLICA_URL: 'ws://10.0.0.7:3000' }), /REPLICA_URL: must use http or https/)
})

t.test('SIP_CREDENTIALS_KEY: unset by default; 32 bytes in hex or base64; anything else names the variable', async (t) => {
  t.equal(loadConfig({}).sipCredentialsKey, undefined)
  const hex = 'ab'.repeat(32)
  t.same(loadConfig({ SIP_CREDENTIALS_KEY: hex }).sipCredentialsKey, Buffer.from(hex, 'hex'))
  const b64 = Buffer.alloc(32, 7).toString('base64')
  t.same(loadConfig({ SIP_CREDENTIALS_KEY: b64 }).sipCredentialsKey, Buffer.alloc(32, 7))
  t.throws(() => loadConfig({ SIP_CREDENTIALS_KEY: 'ab'.repeat(16) }), /SIP_CREDENTIALS_KEY: must be 32 bytes/)
  t.throws(() => loadConfig({ SIP_CREDENTIALS_KEY: 'not a key' }), /SIP_CREDENTIALS_KEY: must be 32 bytes/)
})
