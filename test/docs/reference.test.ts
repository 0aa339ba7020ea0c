import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { END_REASONS } from '../../core/end-reason.js'
import { ERRORS } from '../../core/errors.js'
import { VENDOR_TABLE } from '../../pipeline/index.js'
import { loadConfig } from '../../server/config.js'
import { agentConfigFields } from '../helpers/docs/config-fields.js'
import { section, tableNames } from '../helpers/docs/markdown-tables.js'
import { envReadsIn, metricNamesIn, read, sourceFiles } from '../helpers/docs/source-scan.js'

// The reference pages list what the code has: every environment variable read, agent configuration field, metric,
// end reason and error code. Each check compares a page with the code itself, so a name added to one and not the
// other fails here.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const page = (name: string) => readFileSync(join(ROOT, 'docs', 'reference', name), 'utf8')

/** Variables documented although no code of ours reads them: a dependency's install script does. */
const READ_BY_DEPENDENCIES = new Set(['ONNXRUNTIME_NODE_INSTALL'])

/** The variable names a page's tables list (other tables' rows, such as package names, are not variables). */
function envNames(markdown: string): Set<string> {
  return new Set([...tableNames(markdown)].filter((n) => /^[A-Z][A-Z0-9_]*$/.test(n)))
}

/** Every environment variable the gateway and the CLI read (the vendor table's included). */
function envReads(): Set<string> {
  const names = new Set<string>()
  for (const file of [...sourceFiles(ROOT), 'bin/voxgate.js']) for (const name of envReadsIn(read(ROOT, file))) names.add(name)
  for (const row of VENDOR_TABLE) names.add(row.env.url).add(row.env.key)
  return names
}

/** What `documented` lacks of `expected`, and what it has that `expected` lacks. */
function compare(expected: Iterable<string>, documented: Set<string>): { missing: string[]; extra: string[] } {
  const want = new Set(expected)
  return { missing: [...want].filter((n) => !documented.has(n)).sort(), extra: [...documented].filter((n) => !want.has(n)).sort() }
}

t.test('the scan finds the reads it is meant to find', async (t) => {
  const text = [
    "const A = str(env, 'PORT') ?? env.HOST",
    "renamedCidrs(env, 'EGRESS_ALLOW_CIDRS', 'WEBHOOK_ALLOW_CIDRS')",
    "const VAR = 'VOXGATE_AGENT_ID'\nenv[VAR] ?? process.env['XDG_CONFIG_HOME']",
    '// env.IN_A_COMMENT is not a read',
  ].join('\n')
  t.strictSame([...envReadsIn(text)].sort(), [
    'EGRESS_ALLOW_CIDRS',
    'HOST',
    'PORT',
    'VOXGATE_AGENT_ID',
    'WEBHOOK_ALLOW_CIDRS',
    'XDG_CONFIG_HOME',
  ])
  t.strictSame(metricNamesIn("import { Counter } from 'prom-client'\nnew Counter({ name: 'voxgate_x_total' })"), ['voxgate_x_total'])
})

t.test('configuration.md documents every environment variable read, and none that is not', async (t) => {
  const reads = envReads()
  // loadConfig's own reads, watched through the environment object itself with SIP and the object store on: a
  // read the text scan above misses fails here.
  const seen = new Set<string>()
  const env = new Proxy({ SIP_PORT: '0', RECORDING_S3_BUCKET: 'recordings' } as Record<string, string | undefined>, {
    get: (target, name) => {
      if (typeof name === 'string') seen.add(name)
      return target[name as string]
    },
  })
  loadConfig(env)
  t.strictSame(
    [...seen].filter((n) => !reads.has(n)),
    [],
    'every variable loadConfig reads is found by the scan',
  )
  t.ok(reads.size > 40, `${reads.size} variables read`)

  const { missing, extra } = compare([...reads, ...READ_BY_DEPENDENCIES], envNames(page('configuration.md')))
  t.strictSame(missing, [], 'read by the code but not in docs/reference/configuration.md')
  t.strictSame(extra, [], 'in docs/reference/configuration.md but read by no code')
})

t.test('agent-config.md documents every field of the agent configuration schema', async (t) => {
  const doc = page('agent-config.md')
  const fields = agentConfigFields()
  const sections = [...new Set(fields.map((f) => f.section))]
  t.ok(fields.length > 80, `${fields.length} fields in ${sections.length} sections`)
  for (const name of sections) {
    const body = section(doc, new RegExp(`\`${name.replace('.', '\\.')}\``))
    t.not(body, '', `a heading names \`${name}\``)
    const expected = fields.filter((f) => f.section === name && f.path !== '').map((f) => f.path)
    const { missing, extra } = compare(expected, tableNames(body))
    t.strictSame(missing, [], `fields of ${name} missing from its section`)
    t.strictSame(extra, [], `rows in the section of ${name} that are no field of it`)
  }
})

t.test('metrics-and-logs.md documents every metric the gateway registers', async (t) => {
  const names = sourceFiles(ROOT).flatMap((file) => metricNamesIn(read(ROOT, file)))
  t.ok(names.length >= 15, `${names.length} metrics registered`)
  const { missing, extra } = compare(names, new Set([...tableNames(page('metrics-and-logs.md'))].filter((n) => n.startsWith('voxgate_'))))
  t.strictSame(missing, [], 'registered but not in docs/reference/metrics-and-logs.md')
  t.strictSame(extra, [], 'documented but registered nowhere')
})

t.test('end-reasons-and-errors.md documents every end reason and error code', async (t) => {
  const doc = page('end-reasons-and-errors.md')
  const reasons = compare(END_REASONS, tableNames(section(doc, /^## End reasons/)))
  t.strictSame(reasons.missing, [], 'end reasons missing')
  t.strictSame(reasons.extra, [], 'documented end reasons that core/end-reason.ts lacks')
  const codes = compare(Object.keys(ERRORS), tableNames(section(doc, /^## Error codes/)))
  t.strictSame(codes.missing, [], 'error codes missing')
  t.strictSame(codes.extra, [], 'documented error codes that core/errors.ts lacks')
})

t.test('each check fails when a row is taken out', async (t) => {
  const doc = page('configuration.md')
  const row = doc.split('\n').find((line) => line.startsWith('| `PORT`')) ?? ''
  t.not(row, '', 'the PORT row')
  t.ok(compare(envReads(), envNames(doc.replace(row, ''))).missing.includes('PORT'), 'configuration.md without PORT')
  const errors = page('end-reasons-and-errors.md')
  const internal = errors.split('\n').find((line) => line.startsWith('| `internal`')) ?? ''
  t.ok(compare(Object.keys(ERRORS), tableNames(section(errors.replace(internal, ''), /^## Error codes/))).missing.includes('internal'))
})

t.test('agent-config.md gives each field the default the schema fills', async (t) => {
  const doc = page('agent-config.md')
  for (const field of agentConfigFields()) {
    const value = field.default
    // Objects and lists are described in words; so are texts too long for a table cell (a prompt, a farewell).
    if (field.path === '' || value === undefined || (value !== null && typeof value === 'object')) continue
    if (typeof value === 'string' && value.length > 60) continue
    const body = section(doc, new RegExp(`\`${field.section.replace('.', '\\.')}\``))
    const row = body.split('\n').find((line) => line.startsWith(`| \`${field.path}\``)) ?? ''
    const cell = (row.split('|')[2] ?? '').replace(/[`",]/g, '').trim()
    t.ok(cell.includes(String(value)), `${field.section} ${field.path}: default ${JSON.stringify(value)} in "${cell}"`)
  }
})

t.test('configuration.md gives every variable a default', async (t) => {
  for (const line of page('configuration.md').split('\n')) {
    const cells = line.split('|').map((c) => c.trim())
    if (!/^`[A-Z]/.test(cells[1] ?? '')) continue
    t.not(cells[2], '', `${cells[1]} has a default (or says unset)`)
  }
})
