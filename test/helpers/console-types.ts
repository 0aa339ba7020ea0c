// The console's API types, generated from the gateway's OpenAPI document (built in-process from api/openapi, no
// server started) with openapi-typescript. test/openapi/console-types.test.ts fails when the checked-in file differs.
// Usage: npm run console-types            (writes client/console/api-types.ts)
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'
import { openApiDocument } from '../../api/openapi/openapi-document.js'

/** The generated file, checked in beside the console code that imports it. */
export const CONSOLE_TYPES_FILE = fileURLToPath(new URL('../../client/console/api-types.ts', import.meta.url))

/** The command that rewrites {@link CONSOLE_TYPES_FILE}, for failure messages. */
export const CONSOLE_TYPES_COMMAND = 'npm run console-types'

const HEADER = `// Generated from the gateway's OpenAPI document (api/openapi) by \`${CONSOLE_TYPES_COMMAND}\`: do not edit.
// client/console/types.ts names the shapes the console reads; test/openapi/console-types.test.ts keeps this file current.
`

/** The gateway's OpenAPI document, as GET /openapi.json serves it (the server URL does not reach the types). */
export function gatewayDocument(): Record<string, unknown> {
  return openApiDocument('http://localhost')
}

/** `source` formatted by the project's Biome, as `npm run format` would leave the file. */
function formatted(source: string): string {
  const biome = createRequire(import.meta.url).resolve('@biomejs/biome/bin/biome')
  const r = spawnSync(process.execPath, [biome, 'format', `--stdin-file-path=${CONSOLE_TYPES_FILE}`], { input: source, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`biome could not format the console types:\n${r.stderr}`)
  return r.stdout
}

/**
 * The TypeScript source of the console's API types: `components['schemas']` of `document`. Only the schemas, not
 * `paths`: the console reads response bodies, and the paths' request bodies (every agent config option) would
 * make the file several times longer for nothing the console uses.
 */
export async function consoleTypesSource(document: Record<string, unknown> = gatewayDocument()): Promise<string> {
  const ast = await openapiTS({ ...document, paths: {} } as Parameters<typeof openapiTS>[0])
  return formatted(`${HEADER}\n${astToString(ast)}`)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(CONSOLE_TYPES_FILE, await consoleTypesSource())
  console.log(`wrote ${CONSOLE_TYPES_FILE.slice(fileURLToPath(new URL('../..', import.meta.url)).length)}`)
}
