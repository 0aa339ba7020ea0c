import { readFile } from 'node:fs/promises'
import t from 'tap'
import { z } from 'zod'
import { ConfigError, loadConfig, vendorAvailability } from '../../server/config.js'
import { PLUGIN_USES, pluginsSchema } from '../../pipeline/config/plugins-schema.js'
import type { PipelineConfig } from '../../pipeline/config/schema.js'
import { findTemplate } from '../../pipeline/config/templates.js'
import { validatePipelineConfig } from '../../pipeline/config/validate.js'
import type { SttEvent, SttStream, SttStreamOptions } from '../../pipeline/vendors/stt/stt-stream.js'
import { LocalTtsStream } from '../../pipeline/vendors/tts/local-tts.js'
import {
  availableVendors,
  createSttStream,
  openSessionStt,
  openSessionTts,
  type VendorSettings,
} from '../../pipeline/vendors/open-vendor.js'
import type { SttVendorRow, VendorRow } from '../../pipeline/vendors/table/vendor-row.js'
import { VENDOR_TABLE } from '../../pipeline/vendors/table/vendor-table.js'

// The vendor table is the one place a vendor is registered: the gateway reads its variables from the rows, the
// session opens a call's streams through them. These tests tie the rows to the agent configuration and the docs,
// and show a row added here is read from the environment and selected by its plugin id.

t.test('each row validates its options with the schema the agent configuration uses for that plugin', async (t) => {
  // The plugin list is a discriminated union on `use`: each member's `options` schema, keyed by its `use` literal.
  const members = (pluginsSchema({}) as unknown as { element: { options: z.ZodObject[] } }).element.options
  const byUse = new Map(members.map((m) => [(m.shape.use as z.ZodLiteral<string>).value, m.shape.options]))
  t.equal(byUse.size, 9, 'the plugin list has its nine members')
  for (const row of VENDOR_TABLE) {
    t.ok(byUse.has(row.id), `${row.id} is a plugin of the agent configuration`)
    t.equal(byUse.get(row.id), row.options, `${row.id}: the same schema object`)
    t.equal(row.id.startsWith(row.kind === 'llm' ? 'agent.' : `${row.kind}.`), true, `${row.id} is a ${row.kind} plugin`)
  }
  const vendorUses = [...byUse.keys()].filter((use) => /^(stt|tts)\./.test(use) && use !== 'tts.local')
  t.strictSame(
    vendorUses.filter((use) => !VENDOR_TABLE.some((row) => row.id === use)),
    [],
    'every vendor plugin of the configuration has a row',
  )
})

t.test('the environment variables and defaults are the documented ones', async (t) => {
  const docs = await readFile(new URL('../../docs/reference/configuration.md', import.meta.url), 'utf8')
  const defaults = loadConfig({}).vendors
  for (const row of VENDOR_TABLE) {
    const line = docs.split('\n').find((l) => l.includes(`\`${row.env.key}\``))
    t.ok(line, `${row.env.key} is documented`)
    t.match(line, `\`${row.env.url}\``, `${row.env.url} on the same line`)
    t.match(line, `\`${row.env.defaultUrl}\``, `${row.env.url} defaults to ${row.env.defaultUrl}`)
    t.match(line, `\`${row.id}\``, `the line names ${row.id}`)
    t.strictSame(defaults[row.id], { url: row.env.defaultUrl, apiKey: undefined }, `${row.id} on an empty environment`)
  }
  t.strictSame(
    VENDOR_TABLE.map((row) => [row.env.url, row.env.key]),
    [
      ['STT_VENDOR_A_URL', 'STT_VENDOR_A_API_KEY'],
      ['STT_VENDOR_B_URL', 'STT_VENDOR_B_API_KEY'],
      ['STT_OPENAI_COMPATIBLE_URL', 'STT_OPENAI_COMPATIBLE_API_KEY'],
      ['TTS_VENDOR_A_URL', 'TTS_VENDOR_A_API_KEY'],
      ['TTS_OPENAI_COMPATIBLE_URL', 'TTS_OPENAI_COMPATIBLE_API_KEY'],
      ['LLM_BASE_URL', 'LLM_API_KEY'],
    ],
    'the names, in the order they are checked',
  )
  t.strictSame(vendorAvailability(loadConfig({ STT_VENDOR_B_API_KEY: 'k' })), {
    stt: { vendor_a: false, vendor_b: true, openai_compatible: false },
    tts: { vendor_a: false, openai_compatible: false },
  })
})

t.test("a keyless vendor (a server of the operator's own) is configured by its URL alone; a key is sent when set", async (t) => {
  t.strictSame(loadConfig({ STT_OPENAI_COMPATIBLE_URL: 'http://gpu-1:8000/v1/' }).vendors['stt.openai_compatible'], {
    url: 'http://gpu-1:8000/v1',
    apiKey: '',
  })
  t.strictSame(
    loadConfig({ TTS_OPENAI_COMPATIBLE_URL: 'http://gpu-1:8880/v1', TTS_OPENAI_COMPATIBLE_API_KEY: 'sk-1' }).vendors[
      'tts.openai_compatible'
    ],
    { url: 'http://gpu-1:8880/v1', apiKey: 'sk-1' },
  )
  t.strictSame(vendorAvailability(loadConfig({ STT_OPENAI_COMPATIBLE_URL: 'http://gpu-1:8000/v1' })).stt, {
    vendor_a: false,
    vendor_b: false,
    openai_compatible: true,
  })
  t.throws(
    () => loadConfig({ STT_OPENAI_COMPATIBLE_URL: 'ws://gpu-1:8000/v1' }),
    new ConfigError('STT_OPENAI_COMPATIBLE_URL', 'must use http or https, got "ws"'),
  )
})

/** A speech-to-text stream that records how it was opened and hears nothing. */
class RecordingSttStream implements SttStream {
  closed = false
  constructor(
    readonly options: { language: string },
    readonly stream: SttStreamOptions,
  ) {}
  pushAudio(): void {}
  finalize(): void {}
  async close(): Promise<void> {
    this.closed = true
  }
  async *[Symbol.asyncIterator](): AsyncIterator<SttEvent> {}
}

const testVendorOptions = z.strictObject({ language: z.string().default('en') }).prefault({})

const testVendor: SttVendorRow<'stt.vendor_test', typeof testVendorOptions> = {
  id: 'stt.vendor_test',
  kind: 'stt',
  env: { url: 'STT_VENDOR_TEST_URL', key: 'STT_VENDOR_TEST_API_KEY', defaultUrl: 'wss://stt.test.example', schemes: ['ws', 'wss'] },
  options: testVendorOptions,
  create: (options, stream) => new RecordingSttStream(options, stream),
}

const table: readonly VendorRow[] = [...VENDOR_TABLE, testVendor]

/** The default template with its STT step switched to `use`. */
function configWithStt(use: string, options: unknown): PipelineConfig {
  const template = findTemplate()
  if (template === undefined) throw new Error('no default template')
  const checked = validatePipelineConfig(template.config)
  if (!checked.ok) throw new Error(checked.errors.join('; '))
  const plugins = checked.config.plugins.filter((p) => !p.use.startsWith('stt.'))
  return { ...checked.config, plugins: [{ use, options }, ...plugins] } as unknown as PipelineConfig
}

t.test('a row added to the table is read from the environment and selected by its plugin id', async (t) => {
  const config = loadConfig({ STT_VENDOR_TEST_URL: 'ws://127.0.0.1:9/', STT_VENDOR_TEST_API_KEY: 'k' }, table)
  const vendors: VendorSettings = config.vendors
  t.strictSame(vendors['stt.vendor_test'], { url: 'ws://127.0.0.1:9', apiKey: 'k' }, 'its variables are read like any row')
  t.strictSame(vendors['stt.vendor_a'], { url: 'wss://api.deepgram.com', apiKey: undefined }, 'the built-in rows are untouched')
  t.throws(
    () => loadConfig({ STT_VENDOR_TEST_URL: 'https://stt.test.example' }, table),
    new ConfigError('STT_VENDOR_TEST_URL', 'must use ws or wss, got "https"'),
    'and checked like any row',
  )
  t.equal(availableVendors(vendors, table).stt.vendor_test, true, 'it counts as an available STT vendor')

  const options = testVendorOptions.parse({ language: 'de' })
  const stt = openSessionStt(configWithStt('stt.vendor_test', options), vendors, { format: 'pcm_8000' }, table)
  t.type(stt, RecordingSttStream, 'the session opens the new vendor for a configuration that selects it')
  if (!(stt instanceof RecordingSttStream)) return
  t.strictSame(stt.options, { language: 'de' }, 'with the plugin options')
  t.strictSame(stt.stream, { format: 'pcm_8000', wantWords: true, endpoint: { url: 'ws://127.0.0.1:9', apiKey: 'k' } }, 'and its endpoint')

  const unkeyed = loadConfig({}, table).vendors
  t.equal(openSessionStt(configWithStt('stt.vendor_test', options), unkeyed, { format: 'pcm_8000' }, table), undefined, 'no key: no stream')
  t.throws(
    () => createSttStream({ use: 'stt.vendor_test', options }, { format: 'pcm_8000', endpoint: { url: 'ws://x', apiKey: 'k' } }),
    /no vendor row for plugin stt.vendor_test/,
    'the default table does not know it',
  )
})

t.test("the agent configuration's plugin list is built from the table: a row is all a vendor's plugin entry needs", async (t) => {
  const plugins = (config: PipelineConfig) => config.plugins as unknown[]
  const withTest = plugins(configWithStt('stt.vendor_test', { language: 'de' }))
  const extended = pluginsSchema({}, table).safeParse(withTest)
  t.ok(extended.success, `the list built with the added row accepts the new plugin${extended.success ? '' : `: ${extended.error.message}`}`)
  if (extended.success)
    t.strictSame(extended.data[0], { use: 'stt.vendor_test', options: { language: 'de' } }, 'its options parsed by its own schema')
  const badOptions = pluginsSchema({}, table).safeParse(plugins(configWithStt('stt.vendor_test', { language: 7 })))
  t.equal(badOptions.success, false, "and checks them with the row's schema")
  t.equal(pluginsSchema({}).safeParse(withTest).success, false, 'the default table does not know it')
  const checked = validatePipelineConfig(configWithStt('stt.vendor_test', {}))
  t.equal(checked.ok, false, 'nor does the configuration built from the default table')
  t.strictSame(
    PLUGIN_USES,
    [
      'stt.vendor_a',
      'stt.vendor_b',
      'stt.openai_compatible',
      'turn_manager',
      'agent.llm',
      'agent.webhook',
      'tts.vendor_a',
      'tts.openai_compatible',
      'tts.local',
    ],
    'the plugin names in pipeline order, the vendors among them from the table',
  )
})

t.test('a TTS vendor without a key speaks with tts.local, and the warning names its variable', async (t) => {
  const template = findTemplate('voice-agent-default')
  const checked = validatePipelineConfig(template?.config)
  if (!checked.ok) throw new Error(checked.errors.join('; '))
  const plugins = checked.config.plugins.filter((p) => !p.use.startsWith('tts.'))
  const config: PipelineConfig = { ...checked.config, plugins: [...plugins, { use: 'tts.vendor_a', options: {} } as never] }
  const warnings: string[] = []
  const logger = { debug: () => {}, info: () => {}, warn: (_: object, message: string) => warnings.push(message), error: () => {} }
  const signal = AbortSignal.abort()
  const tts = openSessionTts(config, loadConfig({}).vendors, { outputFormat: 'pcm_16000', signal, logger })
  t.type(tts, LocalTtsStream)
  t.strictSame(warnings, ['tts.vendor_a has no API key configured (TTS_VENDOR_A_API_KEY): speaking with tts.local instead'])
  await tts?.close()
  const none = openSessionTts({ ...config, plugins }, loadConfig({}).vendors, { outputFormat: 'pcm_16000', signal, logger })
  t.equal(none, undefined, 'no TTS step: no stream')
})
