#!/usr/bin/env node
// Builds the browser SDK and demo into client/dist with the project's TypeScript (no bundler):
// dist/src/*.js (SDK modules), dist/demo/demo.js and dist/index.html (the page the gateway serves at `/`).
// Usage: node client/build.mjs            (also: import { buildClient } from './client/build.mjs')
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))

/** Compile the client; throws with the compiler output on failure. Returns the dist directory. */
export function buildClient() {
  const require = createRequire(import.meta.url)
  const tsc = require.resolve('typescript/bin/tsc')
  const result = spawnSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.json')], { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`client build failed:\n${result.stdout}${result.stderr}`)
  const dist = join(here, 'dist')
  mkdirSync(dist, { recursive: true })
  copyFileSync(join(here, 'demo', 'index.html'), join(dist, 'index.html'))
  return dist
}

/** True when the built page and its scripts exist. */
export function clientIsBuilt() {
  const dist = join(here, 'dist')
  return ['index.html', 'demo/demo.js', 'src/voxgate-client.js'].every((file) => existsSync(join(dist, file)))
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
