#!/usr/bin/env node
// `npm install` / `npm run prepare` in this checkout: builds the browser client (client/dist) and the gateway
// (dist/, the PGlite template). Skipped when another project installs this checkout as a dependency: the
// example `voxgate init` writes links it (`file:<checkout>`) so `npx voxgate` works there, and npm runs a linked
// package's prepare on every install of that project; the checkout was built by its own install, and rebuilding
// the client there would take ~10-20 s and rewrite files a running gateway serves.
import { spawnSync } from 'node:child_process'
import { realpathSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = realpathSync(join(dirname(fileURLToPath(import.meta.url)), '..'))
// npm sets npm_config_local_prefix to the project it operates on.
const project = process.env.npm_config_local_prefix
const installedElsewhere = project !== undefined && project !== '' && realOrSelf(project) !== root
if (!installedElsewhere) {
  for (const script of ['client/build.mjs', 'bin/build.js']) {
    const r = spawnSync(process.execPath, [join(root, script)], { cwd: root, stdio: 'inherit' })
    if (r.status !== 0) process.exit(r.status ?? 1)
  }
}

function realOrSelf(path) {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}
