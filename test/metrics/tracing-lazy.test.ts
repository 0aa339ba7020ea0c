import t from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { ARCHITECTURE } from '../architecture/rules.js'

// "Nothing loaded when unset": the OpenTelemetry SDK and exporter are imported by one module only, and that
// module is only ever imported dynamically (by the wiring, when OTEL_EXPORTER_OTLP_ENDPOINT is set).
const ROOT = join(import.meta.dirname, '..', '..')

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return path.endsWith('.ts') ? [path] : []
  })
}

/** Specifiers of the static `import ... from '...'` statements (type-only imports are erased, so left out). */
function staticImports(text: string): string[] {
  return [...text.matchAll(/^import\s+(?!type\s)[^'"]*?from\s+'([^']+)'/gm)].map((m) => m[1] as string)
}

t.test('only server/otel-turn-traces.ts imports the OpenTelemetry SDK, and nothing imports it statically', async (t) => {
  const files = ARCHITECTURE.roots.flatMap((d) => sources(join(ROOT, d)))
  t.ok(files.length > 100, `sources found (${files.length})`)
  const sdkUsers: string[] = []
  const staticUsers: string[] = []
  for (const f of files) {
    const text = readFileSync(f, 'utf8')
    const imports = staticImports(text)
    if (imports.some((s) => /^@opentelemetry\/(sdk-|exporter-|resources)/.test(s))) sdkUsers.push(relative(ROOT, f))
    if (imports.some((s) => s.endsWith('/otel-turn-traces.js'))) staticUsers.push(relative(ROOT, f))
  }
  t.same(sdkUsers, ['server/otel-turn-traces.ts'])
  t.same(staticUsers, [], 'loaded with a dynamic import() only')
  t.match(readFileSync(join(ROOT, 'server/observability.ts'), 'utf8'), /await import\('\.\/otel-turn-traces\.js'\)/)
})
