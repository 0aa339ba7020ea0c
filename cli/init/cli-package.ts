import { readFileSync } from 'node:fs'
import { dirname, join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The voxgate package this CLI runs from: its folder and version. */
export interface CliPackage {
  root: string
  version: string
}

/**
 * Finds the package.json named `voxgate` above this module (the checkout's root, whether the CLI runs from the
 * dist/ bundle or from the sources through tsx); undefined when there is none.
 */
export function findCliPackage(from: string = fileURLToPath(import.meta.url)): CliPackage | undefined {
  let dir = dirname(from)
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown }
      if (pkg.name === 'voxgate') return { root: dir, version: typeof pkg.version === 'string' ? pkg.version : '0.0.0' }
    } catch {
      // No package.json here (or not JSON): keep climbing.
    }
    const parent = dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

/**
 * How the example project depends on the CLI, so `npx voxgate` in it runs this same CLI: a `file:` link to the
 * checkout it ran from (npm symlinks it; its bin then runs with the checkout's own node_modules), or, when this
 * CLI was itself installed from the registry (it lives under node_modules), that version from the registry.
 */
export function cliDependencySpec(pkg: CliPackage): string {
  if (pkg.root.split(sep).includes('node_modules')) return `^${pkg.version}`
  // Absolute: the project keeps working wherever it is moved on this machine, and the path says what it is.
  return `file:${pkg.root.split(sep).join('/')}`
}
