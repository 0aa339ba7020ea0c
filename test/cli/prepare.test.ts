/**
 * bin/prepare.js, the checkout's `prepare` script: npm runs it for `npm install` here, and also on every install of
 * a project that links this checkout (the example of `voxgate init`, `file:<checkout>`). There it must do nothing:
 * the checkout was built by its own install, and a client rebuild would take seconds and rewrite files a running
 * gateway serves.
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))

t.test('installed by another project: builds nothing', async (t) => {
  const project = mkdtempSync(join(tmpdir(), 'voxgate-prepare-'))
  const builtBefore = statSync(join(root, 'client', 'dist')).mtimeMs
  const r = spawnSync(process.execPath, [join(root, 'bin', 'prepare.js')], {
    cwd: root,
    env: { ...process.env, npm_config_local_prefix: project, npm_command: 'install' },
    encoding: 'utf8',
  })
  t.equal(r.status, 0, r.stderr)
  t.equal(r.stdout, '', 'no build output')
  t.equal(statSync(join(root, 'client', 'dist')).mtimeMs, builtBefore, 'client/dist untouched')
})
