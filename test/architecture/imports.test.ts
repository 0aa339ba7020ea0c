// The repository obeys docs/architecture.md: every .ts file under the source roots, every import, every rule; and
// the client's files (built apart, no parts) have no file loops and no long files.
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { checkFileShapes, checkImports, type RuleName } from './check-imports.js'
import { ARCHITECTURE } from './rules.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

/** Every `.ts` file under `dir`, as repository paths with forward slashes. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith('.ts') ? [relative(root, path).split(sep).join('/')] : []
  })
}

/** path -> text of every `.ts` file under `dirs`. */
function read(dirs: readonly string[]): Map<string, string> {
  const found = new Map<string, string>()
  for (const dir of dirs) for (const path of sources(join(root, dir))) found.set(path, readFileSync(join(root, path), 'utf8'))
  return found
}

const started = performance.now()
const files = read(ARCHITECTURE.roots)
const client = read(ARCHITECTURE.clientRoots)
const violations = [...checkImports(files), ...checkFileShapes(client)]
const elapsed = performance.now() - started

t.comment(`read and checked ${files.size} files and ${client.size} client files in ${elapsed.toFixed(0)} ms`)
t.ok(files.size > 50, 'found the source files')
t.ok(client.size > 10, 'found the client files')

const rules: Record<RuleName, string> = {
  'unknown-part': 'every file belongs to a part',
  unresolved: 'every relative import resolves to a file',
  parts: 'parts import only what the table allows',
  door: 'each door is the only way into its folder',
  'codec-io': 'codecs reach no I/O module',
  'folder-cycle': 'no cycles between folders, nor between top-level folders',
  'part-cycle': 'no cycles between parts',
  'file-cycle': 'no cycles between files (sources and client)',
  'file-length': `no source or client file over ${ARCHITECTURE.fileLength.maxLines} lines`,
}

for (const [rule, title] of Object.entries(rules)) {
  t.test(`${rule}: ${title}`, async (t) => {
    const broken = violations.filter((v) => v.rule === rule)
    for (const v of broken) t.fail(v.message, { stack: '', at: null })
    if (broken.length === 0) t.pass('none broken')
  })
}

t.test('docs/architecture.md shows the same rules', async (t) => {
  const page = readFileSync(join(root, 'docs/architecture.md'), 'utf8')
  const rows = new Map<string, string>()
  for (const line of page.split('\n').filter((l) => l.startsWith('|'))) {
    const [part, , mayImport] = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim())
    const name = /^`([^`]+)`$/.exec(part ?? '')?.[1]
    if (name !== undefined) rows.set(name, mayImport ?? '')
  }
  t.same([...rows.keys()].sort(), Object.keys(ARCHITECTURE.parts).sort(), 'one table row per part')
  for (const [part, rule] of Object.entries(ARCHITECTURE.parts)) {
    const shown = rows.get(part) ?? ''
    if (rule.mayImport === 'any') t.equal(shown, 'anything', part)
    else t.same([...shown.matchAll(/`([^`]+)`/g)].map((m) => m[1]).sort(), [...rule.mayImport].sort(), part)
  }
  for (const name of [...ARCHITECTURE.codecs.basenames, ...ARCHITECTURE.codecs.forbidden]) {
    t.ok(page.includes(`\`${name}\``), `the page names ${name}`)
  }
})

// One style for class privacy: ECMAScript `#private` members, never TypeScript's `private` (which is only a
// compile-time hint). A private constructor has no `#` form and stays allowed.
t.test('class members are #private, not TypeScript private', async (t) => {
  const found: string[] = []
  for (const [path, text] of files) {
    text.split('\n').forEach((line, i) => {
      if (/(^|[(,{;])\s*private\s+(?!constructor\b)\w/.test(line)) found.push(`${path}:${i + 1}: ${line.trim()}`)
    })
  }
  t.same(found, [], 'no `private` members or parameter properties')
})
