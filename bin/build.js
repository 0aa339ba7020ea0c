#!/usr/bin/env node
// Compiles the gateway's TypeScript into dist/ (one .js per .ts, no bundling) with esbuild, which tsx already
// brings along. No type check here: `npm test` and `npm run typecheck` run tsc. esbuild is used instead of tsc
// because it is fast enough to run on every start: bin/voxgate.js calls ensureBuilt(), which recompiles only the
// sources whose size or mtime differs from the last build (a manifest in dist/ records them) and deletes the
// output of removed sources, so `npm start` after editing a .ts file never runs stale code.
//
// Usage: node bin/build.js           build dist/ (what changed) and the PGlite template (.cache/pglite)
//        node bin/build.js --clean   rebuild every file
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const dist = join(root, 'dist')
const manifestFile = join(dist, '.build-manifest.json')
/** The folders the gateway runs from (test/ and bench/ run through tsx). */
const SOURCE_DIRS = ['core', 'gateway', 'pipeline', 'api', 'carrier', 'cli']
/** Bumped when the options below change, so every file is rebuilt with the new ones. */
const BUILD_FORMAT = 1

/** Every .ts source (not .d.ts) as path relative to the root -> "size:mtime". */
function scanSources() {
  const found = new Map()
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const rel = join(dir, entry.name)
      if (entry.isDirectory()) walk(rel)
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        const st = statSync(join(root, rel))
        found.set(rel, `${st.size}:${st.mtimeMs}`)
      }
    }
  }
  for (const dir of SOURCE_DIRS) {
    if (statSync(join(root, dir), { throwIfNoEntry: false })?.isDirectory()) walk(dir)
  }
  return found
}

function readManifest() {
  try {
    const m = JSON.parse(readFileSync(manifestFile, 'utf8'))
    return m.format === BUILD_FORMAT ? new Map(Object.entries(m.files)) : new Map()
  } catch {
    return new Map()
  }
}

/** What a build would do: sources to compile and outputs to delete. Costs one stat per source (a few ms). */
export function buildPlan() {
  const sources = scanSources()
  // An install that ships dist/ without the sources runs dist/ as it is.
  if (sources.size === 0) return { sources, compile: [], remove: [] }
  const built = readManifest()
  const compile = [...sources].filter(([rel, stamp]) => built.get(rel) !== stamp).map(([rel]) => rel)
  const remove = [...built.keys()].filter((rel) => !sources.has(rel))
  return { sources, compile, remove }
}

function outputOf(rel) {
  return join(dist, rel.replace(/\.ts$/, '.js'))
}

/** Writes through a temporary file, so a process reading dist/ meanwhile never sees half a file. */
function writeAtomic(file, text) {
  mkdirSync(dirname(file), { recursive: true })
  const tmp = `${file}.tmp-${process.pid}`
  writeFileSync(tmp, text)
  renameSync(tmp, file)
}

/** esbuild, resolved from tsx (which depends on it), so the build works wherever tsx is installed. */
async function loadEsbuild() {
  const fromTsx = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'))
  return import(pathToFileURL(fromTsx.resolve('esbuild')).href)
}

/**
 * Brings dist/ up to date with the sources; returns what it did. Quick when nothing changed (no esbuild load).
 * `clean` recompiles everything.
 */
export async function ensureBuilt({ clean = false } = {}) {
  const plan = buildPlan()
  const compile = clean ? [...plan.sources.keys()] : plan.compile
  if (compile.length === 0 && plan.remove.length === 0) return { compiled: 0, removed: 0 }
  const esbuild = await loadEsbuild()
  for (const rel of plan.remove) {
    rmSync(outputOf(rel), { force: true })
    rmSync(`${outputOf(rel)}.map`, { force: true })
  }
  await Promise.all(
    compile.map(async (rel) => {
      const out = outputOf(rel)
      const source = readFileSync(join(root, rel), 'utf8')
      const result = await esbuild.transform(source, {
        loader: 'ts',
        format: 'esm',
        target: 'node20',
        sourcemap: 'external',
        sourcefile: relative(dirname(out), join(root, rel)),
        // The tsconfig settings that change emitted code, as tsx (and tsc) apply them.
        tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, useDefineForClassFields: true } },
      })
      writeAtomic(`${out}.map`, result.map)
      writeAtomic(out, `${result.code}//# sourceMappingURL=${out.slice(dirname(out).length + 1)}.map\n`)
    }),
  )
  // Stamps are those seen before compiling: a file edited during the build is compiled again next time.
  const files = Object.fromEntries(plan.sources)
  writeAtomic(manifestFile, `${JSON.stringify({ format: BUILD_FORMAT, files })}\n`)
  return { compiled: compile.length, removed: plan.remove.length }
}

/** Makes the PGlite template (see gateway/store/pglite-template.ts) with the code just built. */
async function ensureTemplate() {
  const mod = await import(pathToFileURL(join(dist, 'gateway', 'store', 'pglite-template.js')).href)
  const dir = mod.defaultPgliteTemplateDir()
  if (dir === undefined) return undefined
  return mod.ensurePgliteTemplate(dir)
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = performance.now()
  const { compiled, removed } = await ensureBuilt({ clean: process.argv.includes('--clean') })
  console.log(`dist/: compiled ${compiled} files, removed ${removed} (${Math.round(performance.now() - started)} ms)`)
  const templateStarted = performance.now()
  try {
    const template = await ensureTemplate()
    if (template !== undefined) {
      console.log(`PGlite template: ${relative(root, template)} (${Math.round(performance.now() - templateStarted)} ms)`)
    }
  } catch (error) {
    // Not fatal for an install: the first start then runs initdb itself (slower, same result).
    console.warn(`PGlite template not made: ${error instanceof Error ? error.message : String(error)}`)
  }
}
