#!/usr/bin/env node
// Builds the browser SDK and demo into client/dist with the project's TypeScript (no bundler):
// dist/src/*.js (SDK modules), dist/demo/demo.js and dist/index.html (the page the gateway serves at `/`).
// The operator console (client/console) is type-checked by tsc (its own tsconfig, no output), then bundled with esbuild (which tsx
// brings along) into dist/console/console.js and console.css with uPlot inside: no CDN, works offline.
// Usage: node client/build.mjs            (also: import { buildClient } from './client/build.mjs')
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))

/** Bundles the console (script and styles) into dist/console with esbuild, resolved through tsx. */
function bundleConsole(dist) {
  const require = createRequire(import.meta.url)
  const fromTsx = createRequire(require.resolve('tsx/package.json'))
  const esbuild = fromTsx('esbuild')
  const out = join(dist, 'console')
  mkdirSync(out, { recursive: true })
  esbuild.buildSync({
    absWorkingDir: here,
    entryPoints: { console: join(here, 'console', 'main.ts'), 'console-styles': join(here, 'console', 'styles.css') },
    outdir: out,
    bundle: true,
    format: 'esm',
    target: 'es2020',
    minify: true,
    sourcemap: 'linked',
    logLevel: 'error',
  })
  renameSync(join(out, 'console-styles.css'), join(out, 'console.css'))
  rmSync(join(out, 'console-styles.css.map'), { force: true })
  copyFileSync(join(here, 'console', 'index.html'), join(out, 'index.html'))
}

/** Compile the client; throws with the compiler output on failure. Returns the dist directory. */
export function buildClient() {
  const require = createRequire(import.meta.url)
  const tsc = require.resolve('typescript/bin/tsc')
  for (const project of [join(here, 'tsconfig.json'), join(here, 'console', 'tsconfig.json')]) {
    const result = spawnSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8' })
    if (result.status !== 0) throw new Error(`client build failed:\n${result.stdout}${result.stderr}`)
  }
  const dist = join(here, 'dist')
  mkdirSync(dist, { recursive: true })
  copyFileSync(join(here, 'demo', 'index.html'), join(dist, 'index.html'))
  bundleConsole(dist)
  return dist
}

/** True when the built page and its scripts exist. */
export function clientIsBuilt() {
  const dist = join(here, 'dist')
  return ['index.html', 'demo/demo.js', 'src/voxgate-client.js', 'console/index.html', 'console/console.js', 'console/console.css'].every(
    (file) => existsSync(join(dist, file)),
  )
}

/** True when the project's TypeScript compiler is installed (not in a production install without dev deps). */
export function compilerAvailable() {
  try {
    createRequire(import.meta.url).resolve('typescript/bin/tsc')
    return true
  } catch {
    return false
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // Run as the npm `prepare` script: an install without dev dependencies has no tsc and must not fail for it;
  // the gateway then answers 503 at `/` with the reason.
  if (!compilerAvailable()) {
    console.warn('client/build.mjs: typescript is not installed, the demo page is not built')
    process.exit(0)
  }
  try {
    console.log(`built ${buildClient()}`)
  } catch (error) {
    console.error(error instanceof Error ? error.message : error)
    process.exit(1)
  }
}
