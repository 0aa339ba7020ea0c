import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openApiDocument } from '../../../api/openapi/openapi-document.js'

// docs/reference/rest-api.md, written from the OpenAPI document the gateway serves at /openapi.json:
// `npm run docs:rest-api` rewrites the page, and test/docs/rest-api.test.ts fails when the committed page differs.

type Json = Record<string, unknown>
interface Schema {
  type?: string | string[]
  enum?: unknown[]
  const?: unknown
  anyOf?: Schema[]
  oneOf?: Schema[]
  items?: Schema
  properties?: Record<string, Schema>
  required?: string[]
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
  default?: unknown
  description?: string
  $ref?: string
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
/** Where the page lives. */
export const REST_API_PAGE = join(ROOT, 'docs', 'reference', 'rest-api.md')

/** A table cell: no pipes or line breaks. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ')
}

/** A short type: `string`, `integer 1 to 100`, `"a" \| "b"`, `array of string`. */
export function typeText(schema: Schema | undefined): string {
  if (schema === undefined) return 'any'
  if (schema.$ref !== undefined) return schema.$ref.replace('#/components/schemas/', '')
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  if (schema.enum !== undefined) {
    const values = schema.enum.map((v) => JSON.stringify(v))
    return values.length > 8 ? `${values.slice(0, 8).join(', ')}, ... (${values.length})` : values.join(', ')
  }
  const alts = schema.anyOf ?? schema.oneOf
  if (alts !== undefined) return [...new Set(alts.map(typeText))].join(' or ')
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : (schema.type ?? 'any')
  if (type === 'array') return `array of ${typeText(schema.items)}`
  const bounds: string[] = []
  if (schema.minimum !== undefined && schema.maximum !== undefined) bounds.push(`${schema.minimum} to ${schema.maximum}`)
  else if (schema.minimum !== undefined) bounds.push(`>= ${schema.minimum}`)
  else if (schema.maximum !== undefined) bounds.push(`<= ${schema.maximum}`)
  if (schema.maxLength !== undefined) bounds.push(`${schema.minLength ?? 0} to ${schema.maxLength} characters`)
  return [type, ...bounds].join(', ')
}

/** The object shape of a body schema (the first object alternative of a union). */
function objectOf(schema: Schema): Schema | undefined {
  if (schema.properties !== undefined) return schema
  for (const alt of schema.anyOf ?? schema.oneOf ?? []) {
    const found = objectOf(alt)
    if (found !== undefined) return found
  }
  return undefined
}

function fieldsTable(schema: Schema): string[] {
  const object = objectOf(schema)
  if (object === undefined) return [`Body: ${typeText(schema)}.`, '']
  const required = new Set(object.required ?? [])
  const lines = ['| Field | Type | Required | Default |', '| --- | --- | --- | --- |']
  for (const [name, field] of Object.entries(object.properties ?? {})) {
    const def = field.default === undefined ? '' : `\`${cell(JSON.stringify(field.default)).slice(0, 60)}\``
    lines.push(`| \`${name}\` | ${cell(typeText(field))} | ${required.has(name) ? 'yes' : ''} | ${def} |`)
  }
  return [...lines, '']
}

const AUTH_NAMES: Record<string, string> = {
  apiKey: 'an organization API key',
  adminToken: 'the admin token',
  metricsToken: 'the metrics token (when set)',
  agentLink: "an agent link's token",
  carrierSignature: "the carrier's signature",
  twilioSignature: "the carrier's signature",
  webhookSignature: 'the webhook signature',
}

function authText(security: Json[] | undefined): string {
  const names = [...new Set((security ?? []).flatMap((s) => Object.keys(s)).map((k) => AUTH_NAMES[k] ?? k))]
  return names.length === 0 ? 'none' : names.join(' or ')
}

/** Markdown as the project's formatter (Biome, `npm run lint`) writes it: tables padded. */
function formatted(markdown: string): string {
  const biome = spawnSync(join(ROOT, 'node_modules', '.bin', 'biome'), ['format', `--stdin-file-path=${REST_API_PAGE}`], {
    cwd: ROOT,
    input: markdown,
    encoding: 'utf8',
  })
  if (biome.status !== 0) throw new Error(`biome format failed: ${biome.stderr}`)
  return biome.stdout
}

/** The page, from the document the gateway serves, formatted as the committed page is. */
export function restApiPage(): string {
  return formatted(unformattedPage())
}

function unformattedPage(): string {
  const doc = openApiDocument('http://localhost:8080') as {
    paths: Record<string, Record<string, Json>>
    tags: { name: string }[]
  }
  const out: string[] = [
    '# REST API reference',
    '',
    '<!-- Generated from the OpenAPI document (api/openapi/) by `npm run docs:rest-api`: do not edit by hand. -->',
    '',
    'Every HTTP route of the gateway. A running gateway serves the same document as OpenAPI 3.1 at `/openapi.json`',
    '(with full schemas) and renders it at `/docs`. Request bodies are generated from the schemas the routes validate',
    'with; the agent `config` is described field by field in [agent-config.md](agent-config.md). Errors answer with',
    '`{ "error": "<message>", "code": "<code>" }` ([every code](end-reasons-and-errors.md#error-codes)).',
    '',
    'Authentication is a bearer token: `Authorization: Bearer <token>`. An organization API key is for your',
    'backend only, never a browser; the admin token is the `ADMIN_TOKEN` variable.',
    '',
  ]
  const byTag = new Map<string, string[]>()
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const tag = ((op.tags as string[] | undefined) ?? ['other'])[0] as string
      const lines: string[] = [`### \`${method.toUpperCase()} ${path}\``, '', `${op.summary as string}`, '']
      lines.push(`Authentication: ${authText(op.security as Json[] | undefined)}.`, '')
      const params = (op.parameters as { name: string; in: string; schema?: Schema; description?: string }[] | undefined) ?? []
      if (params.length > 0) {
        lines.push('| Parameter | In | Type | Meaning |', '| --- | --- | --- | --- |')
        for (const p of params) lines.push(`| \`${p.name}\` | ${p.in} | ${cell(typeText(p.schema))} | ${cell(p.description ?? '')} |`)
        lines.push('')
      }
      const body = op.requestBody as { content: Record<string, { schema: Schema }> } | undefined
      if (body !== undefined) {
        const [type, content] = Object.entries(body.content)[0] as [string, { schema: Schema }]
        lines.push(`Request body (\`${type}\`):`, '', ...fieldsTable(content.schema))
      }
      const responses = op.responses as Record<string, { description?: string; $ref?: string }>
      const ok = Object.entries(responses).filter(([, r]) => r.$ref === undefined)
      const errors = Object.entries(responses)
        .filter(([, r]) => r.$ref !== undefined)
        .map(([status]) => status)
      lines.push(
        `Responses: ${ok.map(([status, r]) => `${status} ${cell(r.description ?? '')}`).join('; ')}${errors.length > 0 ? `; errors ${errors.join(', ')}` : ''}.`,
        '',
      )
      byTag.set(tag, [...(byTag.get(tag) ?? []), ...lines])
    }
  }
  const order = [...doc.tags.map((t) => t.name), ...[...byTag.keys()].filter((t) => !doc.tags.some((d) => d.name === t))]
  for (const tag of order) {
    const lines = byTag.get(tag)
    if (lines === undefined) continue
    out.push(`## ${tag[0]?.toUpperCase()}${tag.slice(1)}`, '', ...lines)
  }
  return `${out.join('\n').trimEnd()}\n`
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(REST_API_PAGE, restApiPage())
  console.log(`wrote ${REST_API_PAGE}`)
}
