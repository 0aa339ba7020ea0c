#!/usr/bin/env -S node --v8-pool-size=1
// Runs the bundled CLI in dist/, which is brought up to date first (bin/build.js: rebuilt only when a source
// changed since the last build, ~10 ms to check when none did). Loading the sources through tsx instead costs seconds
// per start on a small machine; tsx stays the fallback when dist/ cannot be written (a read-only install).
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
let compiled = false
try {
  const { ensureBuilt } = await import('./build.js')
  await ensureBuilt()
  compiled = true
} catch (error) {
  const reason = error instanceof Error ? error.message.split('\n')[0] : String(error)
  process.stderr.write(`voxgate: cannot build dist/ (${reason}); running the TypeScript sources through tsx\n`)
}
if (compiled) {
  await import(pathToFileURL(join(root, 'dist', 'voxgate.js')).href)
} else {
  const { register } = await import('tsx/esm/api')
  register()
  await import(pathToFileURL(join(root, 'cli', 'main.ts')).href)
}
