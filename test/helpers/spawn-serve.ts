/**
 * Runs `voxgate serve` as `npm start` does (bin/voxgate.js, the bundle in dist/) as a real process: signals,
 * stdout and exit codes are the production ones. Its stdout may be a pipe the test reads, or one whose reader is already gone.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TEST_NODE_FLAGS } from './node-script.js'
import { GATEWAY_NODE_OPTIONS } from '../../server/gc-tuning.js'
import { BIN } from './run-cli.js'

/** A `voxgate serve` process. */
export interface ServeProcess {
  proc: ChildProcess
  url: string
  /** Everything it wrote to stdout (empty when its stdout was closed). */
  stdout(): string
  stderr(): string
  /** Resolves with the exit code or signal when the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** A port free a moment ago (serve prints no URL the test could read from a closed stdout). */
async function freePort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  const port = (srv.address() as { port: number }).port
  await new Promise((r) => srv.close(r))
  return port
}

/**
 * Starts `voxgate serve` on the test's database (DATABASE_URL given, or a fresh embedded one) and resolves once
 * `/healthz` answers. `closedStdout`: the reading end of its stdout pipe is closed before it writes anything.
 * `port`: listen there (a restarted gateway takes its predecessor's place); else any free port. `nodeOptions`: Node's
 * options besides the tests' own, by default those `npm start` gives (GATEWAY_NODE_OPTIONS).
 */
export async function spawnServe(
  env: Record<string, string>,
  opts: { closedStdout?: boolean; port?: number; nodeOptions?: readonly string[] } = {},
): Promise<ServeProcess> {
  const port = opts.port ?? (await freePort())
  const proc = spawn(process.execPath, [...TEST_NODE_FLAGS, ...(opts.nodeOptions ?? GATEWAY_NODE_OPTIONS), BIN, 'serve'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: mkdtempSync(join(tmpdir(), 'voxgate-serve-')),
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  if (opts.closedStdout) proc.stdout!.destroy()
  else proc.stdout!.on('data', (c: Buffer) => (out += c.toString()))
  proc.stderr!.on('data', (c: Buffer) => (err += c.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 90_000
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`voxgate serve exited at start: ${err.slice(0, 2000)}`)
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    )
    if (ok) break
    if (Date.now() > deadline) {
      proc.kill('SIGKILL')
      throw new Error('voxgate serve did not start')
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return { proc, url, stdout: () => out, stderr: () => err, exited }
}
