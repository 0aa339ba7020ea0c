import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

/** The folders of the gateway's and the CLI's own code (not tests, benchmarks or build scripts). */
export const SOURCE_DIRS = ['api', 'carrier', 'cli', 'core', 'gateway', 'pipeline', 'server', 'transports']

/** Every .ts file under `dirs` of `root`, as paths relative to `root`. */
export function sourceFiles(root: string, dirs: readonly string[] = SOURCE_DIRS): string[] {
  const out: string[] = []
  const visit = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') visit(path)
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        out.push(relative(root, join(root, path)))
      }
    }
  }
  for (const dir of dirs) visit(dir)
  return out.sort()
}

/** The lines of `text` that are not comment lines (a name quoted in a comment is not a read). */
function codeLines(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line))
    .join('\n')
}

/**
 * The environment variables a source text reads: `env.NAME`, `env['NAME']`, `env[CONSTANT]` (a `const CONSTANT =
 * 'NAME'` of the same file), and the configuration readers' `str(env, 'NAME')` (every `fn(env, 'NAME', ...)` call,
 * a second quoted name too: `renamedCidrs(env, 'NEW', 'OLD')`).
 */
export function envReadsIn(text: string): Set<string> {
  const code = codeLines(text)
  const names = new Set<string>()
  const NAME = '([A-Z][A-Z0-9_]*[A-Z0-9])'
  for (const m of code.matchAll(new RegExp(`\\benv\\.${NAME}\\b`, 'g'))) names.add(m[1] as string)
  for (const m of code.matchAll(new RegExp(`\\benv\\[\\s*['"]${NAME}['"]\\s*\\]`, 'g'))) names.add(m[1] as string)
  for (const m of code.matchAll(new RegExp(`\\benv\\[\\s*${NAME}\\s*\\]`, 'g'))) {
    const constant = new RegExp(`\\bconst\\s+${m[1]}\\s*=\\s*'${NAME}'`).exec(code)
    names.add(constant?.[1] ?? `<unresolved ${m[1]}>`)
  }
  for (const m of code.matchAll(new RegExp(`\\b\\w+\\(\\s*env\\s*,\\s*'${NAME}'(?:\\s*,\\s*'${NAME}')?`, 'g'))) {
    names.add(m[1] as string)
    if (m[2] !== undefined) names.add(m[2])
  }
  return names
}

/** The metric names a source text registers with prom-client (`name: 'voxgate_...'` in a file importing it). */
export function metricNamesIn(text: string): string[] {
  if (!/from 'prom-client'/.test(text)) return []
  return [...codeLines(text).matchAll(/\bname:\s*'([a-z_:][a-z0-9_:]*)'/g)].map((m) => m[1] as string)
}

/** Read a file under `root`. */
export function read(root: string, path: string): string {
  return readFileSync(join(root, path), 'utf8')
}
