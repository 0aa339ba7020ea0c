#!/usr/bin/env node
// Bundles the gateway's TypeScript into dist/ with esbuild (which tsx already brings along): one ESM bundle per
// entry (dist/voxgate.js, the CLI; dist/pglite-template.js, for the install step) with our code and the
// pure-JavaScript dependencies in it, shared code in chunks. A bundle loads in about half the CPU time of one module
// per file (kysely alone is 279 files): measured 0.5 s instead of 1.0 s on this 2-core machine. Packages with
// native code, WebAssembly or files of their own stay external and load from node_modules as usual.
// No type check here: `npm test` and `npm run typecheck` run tsc.
//
// bin/voxgate.js calls ensureBuilt() before every start: it rebuilds only when a source or the lockfile differs
// from the last build (a manifest in dist/ records size and mtime of each), so `npm start` after editing a .ts file
// never runs stale code; a rebuild takes 1-2 s, a check ~10 ms. The new dist/ is written beside the old one and
// swapped in, so a process starting meanwhile never sees half a build.
//
// Usage: node bin/build.js           build dist/ (when stale) and the PGlite template (.cache/pglite)
//        node bin/build.js --clean   rebuild even when nothing changed
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const dist = join(root, 'dist')
const manifestFile = join(dist, '.build-manifest.json')
/** The folders the gateway runs from (test/ and bench/ run through tsx). */
const SOURCE_DIRS = ['core', 'pipeline', 'carrier', 'gateway', 'transports', 'api', 'server', 'cli']
/** Files outside the sources whose change changes the bundle (the bundled dependencies' versions). */
const INPUT_FILES = ['package-lock.json']
/** Bumped when the options below change, so the next start rebuilds with the new ones. */
const BUILD_FORMAT = 2
/** The bundles: dist/<name>.js from each source. */
const ENTRY_POINTS = { voxgate: 'cli/main.ts', 'pglite-template': 'gateway/store/pglite-template.ts' }
/**
 * Loaded from node_modules, not bundled: native addons (onnxruntime-node, pg's optional pg-native, ws's optional
 * speed-ups), packages that find WebAssembly or data files next to themselves (PGlite, espeak-ng), pino (its
 * transports run files of their own in worker threads), the OpenTelemetry SDK and tsx.
 */
export const EXTERNAL = [
  '@electric-sql/pglite',
  'kysely-pglite-dialect',
  'onnxruntime-node',
  'pg',
  'pg-native',
  'pino',
  'tsx',
  // Loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set; the SDK reads files of its own.
  '@opentelemetry/*',
  // Loaded only when RECORDING_S3_BUCKET is set; large, and nothing gained by bundling it.
  '@aws-sdk/*',
  'bufferutil',
  'utf-8-validate',
  '@echogarden/espeak-ng-emscripten',
]

/** Bundled CommonJS packages call require(): the banner gives the ESM bundle one. */
export const REQUIRE_BANNER =
  "import { createRequire as __voxgateCreateRequire } from 'node:module'; const require = __voxgateCreateRequire(import.meta.url);"
/** The tsconfig settings that change emitted code, as tsx (and tsc) apply them. */
export const TSCONFIG_RAW = { compilerOptions: { verbatimModuleSyntax: true, useDefineForClassFields: true } }

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
  if (found.size === 0) return found
  for (const rel of INPUT_FILES) {
    const st = statSync(join(root, rel), { throwIfNoEntry: false })
    if (st !== undefined) found.set(rel, `${st.size}:${st.mtimeMs}`)
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

/** Whether dist/ is stale: which inputs changed since the last build (a stat per source, a few ms). */
export function buildPlan() {
  const sources = scanSources()
  // An install that ships dist/ without the sources runs dist/ as it is.
  if (sources.size === 0) return { sources, changed: [] }
  const built = readManifest()
  const outputs = Object.keys(ENTRY_POINTS).every((name) => existsSync(join(dist, `${name}.js`)))
  const changed = [...sources].filter(([rel, stamp]) => built.get(rel) !== stamp).map(([rel]) => rel)
  const removed = [...built.keys()].filter((rel) => !sources.has(rel))
  return { sources, changed: outputs ? [...changed, ...removed] : [...sources.keys()] }
}

/** Writes through a temporary file, so a process reading it meanwhile never sees half a file. */
function writeAtomic(file, text) {
  mkdirSync(dirname(file), { recursive: true })
  const tmp = `${file}.tmp-${process.pid}`
  writeFileSync(tmp, text)
  renameSync(tmp, file)
}

/** esbuild, resolved from tsx (which depends on it), so the build works wherever tsx is installed. */
export async function loadEsbuild() {
  const fromTsx = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'))
  return import(pathToFileURL(fromTsx.resolve('esbuild')).href)
}

/** Brings dist/ up to date with the sources; returns how many inputs had changed (0: nothing was built). */
export async function ensureBuilt({ clean = false } = {}) {
  const plan = buildPlan()
  if (plan.sources.size === 0 || (!clean && plan.changed.length === 0)) return { changed: 0 }
  const esbuild = await loadEsbuild()
  const tmp = `${dist}.tmp-${process.pid}`
  rmSync(tmp, { recursive: true, force: true })
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: ENTRY_POINTS,
    outdir: tmp,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    banner: { js: REQUIRE_BANNER },
    sourcemap: 'linked',
    logLevel: 'error',
    tsconfigRaw: TSCONFIG_RAW,
  })
  // Stamps are those seen before building: a file edited during the build is built again next time.
  writeAtomic(join(tmp, '.build-manifest.json'), `${JSON.stringify({ format: BUILD_FORMAT, files: Object.fromEntries(plan.sources) })}\n`)
  const old = `${dist}.old-${process.pid}`
  try {
    if (existsSync(dist)) renameSync(dist, old)
    renameSync(tmp, dist)
  } catch (error) {
    // Another process starting at the same moment swapped in its build of the same sources: use that one.
    if (!existsSync(join(dist, 'voxgate.js'))) throw error
    rmSync(tmp, { recursive: true, force: true })
  }
  rmSync(old, { recursive: true, force: true })
  return { changed: clean ? plan.sources.size : plan.changed.length }
}

/** Makes the PGlite template (see gateway/store/pglite-template.ts) with the code just built. */
async function ensureTemplate() {
  const mod = await import(pathToFileURL(join(dist, 'pglite-template.js')).href)
  const dir = mod.defaultPgliteTemplateDir()
  if (dir === undefined) return undefined
  return mod.ensurePgliteTemplate(dir)
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = performance.now()
  const { changed } = await ensureBuilt({ clean: process.argv.includes('--clean') })
  const what = changed === 0 ? 'up to date' : `bundled (${changed} inputs changed)`
  console.log(`dist/: ${what} (${Math.round(performance.now() - started)} ms)`)
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
