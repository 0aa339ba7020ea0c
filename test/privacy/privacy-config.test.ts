import t from 'tap'
import { resolvePrivacy } from '../../pipeline/config/privacy-schema.js'
import { resolveSessionConfig } from '../../pipeline/config/resolve-session-config.js'
import { DEFAULT_REDACTION_SWITCHES } from '../../pipeline/privacy/redaction-options.js'
import { baseConfig, errorsOf, validOf } from '../config/fixtures/config-fixtures.js'

t.test('privacy stays absent when not given, and resolves to the defaults', async (t) => {
  const config = validOf(baseConfig())
  t.notOk('privacy' in config, 'stored configs do not grow a block nobody set')
  t.strictSame(resolvePrivacy(config.privacy), {
    redact: { cards: true, ssn: true, iban: false, email: false, phone: false },
    redact_webhooks: false,
    transcripts: 'redacted',
    recordings: true,
  })
})

t.test('the config defaults are the detector defaults', async (t) => {
  t.strictSame(resolvePrivacy(undefined).redact, { ...DEFAULT_REDACTION_SWITCHES })
})

t.test('a partial privacy block is filled', async (t) => {
  const config = validOf({ ...baseConfig(), privacy: { redact: { phone: true }, transcripts: 'none' } })
  t.strictSame(config.privacy, {
    redact: { cards: true, ssn: true, iban: false, email: false, phone: true },
    redact_webhooks: false,
    transcripts: 'none',
    recordings: true,
  })
})

t.test('unknown keys and levels are refused', async (t) => {
  t.match(errorsOf({ ...baseConfig(), privacy: { redact: { cvv: true } } }).join('\n'), /privacy\.redact\.cvv/)
  t.match(errorsOf({ ...baseConfig(), privacy: { transcripts: 'some' } }).join('\n'), /privacy\.transcripts/)
  t.match(errorsOf({ ...baseConfig(), privacy: { recordings: 'yes' } }).join('\n'), /privacy\.recordings/)
  t.match(errorsOf({ ...baseConfig(), privacy: { retention_days: 0 } }).join('\n'), /privacy\.retention_days must be between 1 and 3650/)
  t.match(errorsOf({ ...baseConfig(), privacy: { retention_days: 1.5 } }).join('\n'), /privacy\.retention_days/)
  t.match(errorsOf({ ...baseConfig(), privacy: { redact_webhooks: 1 } }).join('\n'), /privacy\.redact_webhooks/)
})

t.test('recordings off and a retention are kept as given', async (t) => {
  const config = validOf({ ...baseConfig(), privacy: { recordings: false, retention_days: 30 } })
  t.equal(config.privacy?.recordings, false)
  t.equal(config.privacy?.retention_days, 30)
})

t.test('a session override changes one switch and keeps the agent values', async (t) => {
  const agent = validOf({ ...baseConfig(), privacy: { redact: { email: true }, redact_webhooks: true } })
  const result = resolveSessionConfig(agent, { privacy: { redact: { cards: false } } })
  if (!result.ok) throw new Error(result.errors.join('; '))
  t.strictSame(result.config.privacy, {
    redact: { cards: false, ssn: true, iban: false, email: true, phone: false },
    redact_webhooks: true,
    transcripts: 'redacted',
    recordings: true,
  })
})
