/**
 * The arguments that run one of the tests' own TypeScript programs (a child gateway, a fake carrier process) in a
 * child `node`: its bundle when bin/test.js built one (VOXGATE_TEST_SCRIPTS names the folder; loading the sources
 * through tsx costs each child 1-2 s of CPU), else the source through tsx (`npx tap FILE`).
 */
import { existsSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))

/**
 * V8 flags for the gateway processes tests start (bin/test.js gives its test processes the same): WebAssembly
 * (PGlite's Postgres, espeak-ng) on V8's baseline compiler only. A `voxgate serve` that starts, takes a few requests
 * and stops spent ~3 s of CPU in background threads optimising WebAssembly it never ran long enough to gain from
 * (5.2 s of CPU in its first 6 s, 2.1 s of it on the main thread). No behaviour changes, only how V8 compiles.
 */
export const TEST_NODE_FLAGS = ['--liftoff-only']

export function nodeScript(source: URL): string[] {
  const file = fileURLToPath(source)
  const built = process.env.VOXGATE_TEST_SCRIPTS
  if (built) {
    const bundle = join(built, relative(root, file).replace(/\.ts$/, '.js'))
    if (existsSync(bundle)) return [...TEST_NODE_FLAGS, bundle]
  }
  return [...TEST_NODE_FLAGS, '--import', 'tsx', file]
}
