#!/usr/bin/env node
// Runs the compiled CLI when `npm run build` produced dist/, else the TypeScript sources through tsx.
import { existsSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { dirname, join } from 'node:path'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const compiled = join(root, 'dist', 'cli', 'main.js')
if (existsSync(compiled)) {
  await import(pathToFileURL(compiled).href)
} else {
  const { register } = await import('tsx/esm/api')
  register()
  await import(pathToFileURL(join(root, 'cli', 'main.ts')).href)
}
