/**
 * The import checker behind test/architecture/imports.test.ts. Pure: it takes source texts keyed by
 * repository path and returns violations, so its own tests can feed it small in-memory trees.
 */
import { posix } from 'node:path'
import ts from 'typescript'
import { addEdge, cyclicComponents, shortestCycle } from './graph.js'
import { ARCHITECTURE, type Architecture } from './rules.js'

/** Names of the rules a violation can break. */
export type RuleName =
  | 'unknown-part'
  | 'unresolved'
  | 'parts'
  | 'door'
  | 'codec-io'
  | 'folder-cycle'
  | 'part-cycle'
  | 'file-cycle'
  | 'file-length'

/** One broken rule: the file, the rule and a message naming the import. */
export interface Violation {
  readonly rule: RuleName
  readonly file: string
  readonly message: string
}

/** A relative import and the repository file it resolves to, if any. */
interface LocalImport {
  readonly specifier: string
  readonly target: string | undefined
  /** Only `import type` / `export type` name it: erased at run time, so it carries no I/O into a codec. */
  readonly typeOnly: boolean
}

/** What one file imports: our own files (relative) and packages or builtins. */
interface FileImports {
  readonly local: readonly LocalImport[]
  /** Packages and builtins imported as values (type-only ones are erased at run time). */
  readonly external: readonly string[]
}

/** Every module specifier in `text`: static imports, `export from`, `import type` and literal `import()`. */
export function importSpecifiers(text: string): string[] {
  const seen = new Set<string>()
  for (const file of ts.preProcessFile(text, true, true).importedFiles) seen.add(file.fileName)
  return [...seen]
}

/** Specifiers that `text` names only in `import type` / `export type` statements (never in a value import). */
export function typeOnlySpecifiers(text: string): Set<string> {
  const typed = new Set<string>()
  const valued = new Set<string>()
  for (const m of text.matchAll(/^\s*(import|export)\s+(type\s)?[^'";]*?from\s*['"]([^'"]+)['"]/gm)) {
    ;(m[2] === undefined ? valued : typed).add(m[3]!)
  }
  for (const s of valued) typed.delete(s)
  return typed
}

/** The repository path a relative specifier names, if one of `files` is there (`./x.js` is `./x.ts`). */
export function resolveRelative(from: string, specifier: string, files: ReadonlyMap<string, unknown>): string | undefined {
  const base = posix.normalize(posix.join(posix.dirname(from), specifier))
  const candidates = [
    base
      .replace(/\.js$/, '.ts')
      .replace(/\.mjs$/, '.mts')
      .replace(/\.cjs$/, '.cts'),
    base,
    `${base}.ts`,
    `${base}/index.ts`,
  ]
  return candidates.find((candidate) => files.has(candidate))
}

/** The part a file belongs to: the longest matching folder; `undefined` when none matches. */
export function partOf(path: string, arch: Architecture = ARCHITECTURE): string | undefined {
  let best: string | undefined
  let bestLength = -1
  for (const [name, rule] of Object.entries(arch.parts)) {
    if (!path.startsWith(rule.folder) || rule.folder.length <= bestLength) continue
    best = name
    bestLength = rule.folder.length
  }
  return best
}

/** Whether a file is a codec: a listed file name, or a name or folder pattern. */
export function isCodec(path: string, arch: Architecture = ARCHITECTURE): boolean {
  return arch.codecs.basenames.includes(posix.basename(path)) || arch.codecs.patterns.some((pattern) => pattern.test(path))
}

/** The forbidden module `specifier` is, if any (`fs`, `node:fs` and `node:fs/promises` all match `node:fs`). */
function forbiddenModule(specifier: string, arch: Architecture): string | undefined {
  const bare = (name: string) => name.replace(/^node:/, '')
  const wanted = bare(specifier)
  return arch.codecs.forbidden.find((name) => wanted === bare(name) || wanted.startsWith(`${bare(name)}/`))
}

/** Checks `files` (repository path -> source text) against `arch`; an empty list means the tree obeys it. */
export function checkImports(files: ReadonlyMap<string, string>, arch: Architecture = ARCHITECTURE): Violation[] {
  const imports = readImports(files)
  return [
    ...checkFiles(imports, arch),
    ...checkCodecs(imports, arch),
    ...checkCycles(imports, arch),
    ...checkFileCycles(imports),
    ...checkFileLengths(files, arch),
  ]
}

/**
 * The file rules alone (no file loops, no file over the length limit), for code that has no parts: the client,
 * which is built apart from the gateway.
 */
export function checkFileShapes(files: ReadonlyMap<string, string>, arch: Architecture = ARCHITECTURE): Violation[] {
  return [...checkFileCycles(readImports(files)), ...checkFileLengths(files, arch)]
}

/** What each file imports, its relative imports resolved against the tree. */
function readImports(files: ReadonlyMap<string, string>): Map<string, FileImports> {
  const imports = new Map<string, FileImports>()
  for (const path of [...files.keys()].sort()) {
    const local: LocalImport[] = []
    const external: string[] = []
    const text = files.get(path)!
    const typeOnly = typeOnlySpecifiers(text)
    for (const specifier of importSpecifiers(text)) {
      if (specifier.startsWith('.')) {
        local.push({ specifier, target: resolveRelative(path, specifier, files), typeOnly: typeOnly.has(specifier) })
      } else if (!typeOnly.has(specifier)) external.push(specifier)
    }
    imports.set(path, { local, external })
  }
  return imports
}

/** Unknown parts, unresolved imports, the part arrows and the doors, import by import. */
function checkFiles(imports: ReadonlyMap<string, FileImports>, arch: Architecture): Violation[] {
  const found: Violation[] = []
  for (const [file, { local }] of imports) {
    const from = partOf(file, arch)
    if (from === undefined) {
      const message = `${file} belongs to no part: add its folder to test/architecture/rules.ts and docs/architecture.md`
      found.push({ rule: 'unknown-part', file, message })
    }
    for (const { specifier, target } of local) {
      const at = `${file} imports '${specifier}'`
      if (target === undefined) {
        found.push({ rule: 'unresolved', file, message: `${at}: no such file under ${arch.roots.join('/, ')}/ (moved or deleted?)` })
        continue
      }
      const to = partOf(target, arch)
      if (from === undefined || to === undefined) continue
      const allowed = arch.parts[from]!.mayImport
      if (from !== to && allowed !== 'any' && !allowed.includes(to) && !allowed.includes(target)) {
        const only = allowed.filter((entry) => entry.endsWith('.ts') && partOf(entry, arch) === to)
        const may = allowed.length === 0 ? 'nothing outside itself' : allowed.join(', ')
        const note = only.length > 0 ? ` (of ${to}, only ${only.join(', ')})` : ''
        found.push({ rule: 'parts', file, message: `${at} (${target}): ${from} may import ${may}; not ${to}${note}` })
      }
      for (const door of arch.doors) {
        if (!target.startsWith(door.folder) || target === door.door || door.exempt.includes(from)) continue
        const exempt = door.exempt.map((part) => arch.parts[part]?.folder ?? part)
        const message = `${at} (${target}): outside ${exempt.join(' and ')}, ${door.door} is the only door into ${door.folder}`
        found.push({ rule: 'door', file, message })
      }
    }
  }
  return found
}

/** Codecs that reach a forbidden module through our own imports, with the shortest chain to each. */
function checkCodecs(imports: ReadonlyMap<string, FileImports>, arch: Architecture): Violation[] {
  const found: Violation[] = []
  for (const codec of imports.keys()) {
    if (!isCodec(codec, arch)) continue
    const previous = new Map<string, string | undefined>([[codec, undefined]])
    const reported = new Set<string>()
    const queue = [codec]
    for (let i = 0; i < queue.length; i++) {
      const file = queue[i]!
      const { local, external } = imports.get(file)!
      for (const specifier of external) {
        const module = forbiddenModule(specifier, arch)
        if (module === undefined || reported.has(module)) continue
        reported.add(module)
        const chain: string[] = []
        for (let at: string | undefined = file; at !== undefined; at = previous.get(at)) chain.unshift(at)
        const message = `${codec} is a codec and reaches ${module}: ${[...chain, `'${specifier}'`].join(' -> ')}`
        found.push({ rule: 'codec-io', file: codec, message })
      }
      for (const { target, typeOnly } of local) {
        if (target === undefined || typeOnly || previous.has(target)) continue
        previous.set(target, file)
        queue.push(target)
      }
    }
  }
  return found
}

/** A graph of names with one import that shows each edge, for the failure message. */
class ImportGraph {
  readonly edges = new Map<string, Set<string>>()
  readonly examples = new Map<string, string>()

  add(from: string | undefined, to: string | undefined, example: string): void {
    if (from === undefined || to === undefined || from === to) return
    addEdge(this.edges, from, to)
    if (!this.examples.has(`${from} ${to}`)) this.examples.set(`${from} ${to}`, example)
  }

  cycles(rule: RuleName, what: string): Violation[] {
    return describeCycles(this.edges, this.examples, rule, what)
  }
}

/** The top-level folder of a repository path (`gateway` for `gateway/store/x.ts`). */
const topFolder = (path: string) => path.split('/')[0]!

/**
 * Cycles between folders (the importer's folder -> the imported file's folder), between top-level folders (the
 * floors: server/ over api/ over gateway/, never back) and between parts.
 */
function checkCycles(imports: ReadonlyMap<string, FileImports>, arch: Architecture): Violation[] {
  const folders = new ImportGraph()
  const floors = new ImportGraph()
  const parts = new ImportGraph()
  for (const [file, { local }] of imports) {
    for (const { specifier, target } of local) {
      if (target === undefined) continue
      const example = `${file} imports '${specifier}'`
      folders.add(posix.dirname(file), posix.dirname(target), example)
      floors.add(topFolder(file), topFolder(target), example)
      parts.add(partOf(file, arch), partOf(target, arch), example)
    }
  }
  return [
    ...folders.cycles('folder-cycle', 'folders'),
    ...floors.cycles('folder-cycle', 'top-level folders'),
    ...parts.cycles('part-cycle', 'parts'),
  ]
}

/** Cycles between files; `import type` counts (a type is a dependency too). */
function checkFileCycles(imports: ReadonlyMap<string, FileImports>): Violation[] {
  const files = new ImportGraph()
  for (const [file, { local }] of imports) {
    for (const { specifier, target } of local) files.add(file, target, `${file} imports '${specifier}'`)
  }
  return files.cycles('file-cycle', 'files')
}

/** Lines of a text as an editor counts them (a final newline starts no line). */
export function lineCount(text: string): number {
  if (text === '') return 0
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
}

/** Files longer than the limit that are not generated. */
function checkFileLengths(files: ReadonlyMap<string, string>, arch: Architecture): Violation[] {
  const { maxLines, generated } = arch.fileLength
  const found: Violation[] = []
  for (const [file, text] of files) {
    const lines = lineCount(text)
    if (lines <= maxLines || generated.test(text.slice(0, text.indexOf('\n')))) continue
    const message = `${file} has ${lines} lines; a source file has at most ${maxLines}: split it by concept (a file per concept)`
    found.push({ rule: 'file-length', file, message })
  }
  return found.sort((a, b) => a.file.localeCompare(b.file))
}

/** One violation per cyclic component: its shortest cycle, an import for each arrow, and the rest of it. */
function describeCycles(graph: Map<string, Set<string>>, examples: Map<string, string>, rule: RuleName, what: string): Violation[] {
  return cyclicComponents(graph).map((component) => {
    const cycle = shortestCycle(graph, component)
    const arrows = cycle.slice(1).map((to, i) => examples.get(`${cycle[i]} ${to}`))
    const others = component.filter((node) => !cycle.includes(node))
    const rest = others.length > 0 ? `; the same knot also holds ${others.join(', ')}` : ''
    const message = `${what} import each other: ${cycle.join(' -> ')} (${arrows.join('; ')})${rest}`
    return { rule, file: component[0]!, message }
  })
}
