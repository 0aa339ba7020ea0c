/**
 * A PostgreSQL server of the test's own (Debian's binaries, a new cluster in a temporary folder, a port of its
 * own), so a test can stop and start it without touching the shared server other test files use.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './nginx.js'

/** Debian's PostgreSQL binaries (the newest installed version), or undefined. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a))
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin')
}

/** A running cluster of the test's own. */
export interface PgCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string
  /** Stops the server (fast shutdown: sessions are terminated, as in a restart); nothing if stopped. */
  stop(): void
  /** Starts it again on the same port and waits until it accepts connections; nothing if running. */
  start(): void
  /** Stops it and removes its folder. */
  destroy(): void
}

/** Creates and starts a cluster. As root, the server runs as the `postgres` user (it refuses to run as root). */
export async function startPgCluster(): Promise<PgCluster> {
  const bin = postgresBinDir()
  if (bin === undefined) throw new Error('PostgreSQL binaries not found under /usr/lib/postgresql')
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-pg-'))
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString())
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString())
    chownSync(dir, uid, gid)
  }
  const run = (cmd: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]] : [join(bin, cmd), args]
    const r = spawnSync(file, argv, { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`)
  }
  const data = join(dir, 'data')
  run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'])
  const port = await freePort()
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start'])
  const stop = () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'])
  start()
  let running = true
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      if (running) stop()
      running = false
    },
    start() {
      if (!running) start()
      running = true
    },
    destroy() {
      if (running) stop()
      running = false
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
