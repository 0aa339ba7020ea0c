// `node bin/voxgate.js serve --workers N` as a benchmark's child: the production start (bundled dist/, the
// primary forking its workers), stdout read for the first start's API key and for each worker's "listening" line.
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { childrenOf } from './proc-stats.js'
import { GATEWAY_NODE_OPTIONS } from '../server/gc-tuning.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** A running `voxgate serve --workers N`. */
export interface ServeTree {
  url: string
  /** The default organization's key, printed by the first start. */
  apiKey: string
  /** The spawned process: the primary with N > 1 workers, the only gateway with 1. */
  pid: number
  /** The processes that serve requests: the workers, or the primary itself when it is the only one. */
  servingPids: number[]
  /** SIGTERM, then waits for the whole tree to exit (SIGKILL to those pids after `limitMs`). */
  stop(limitMs?: number): Promise<void>
}

async function freePort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  const port = (srv.address() as { port: number }).port
  await new Promise((r) => srv.close(r))
  return port
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Starts the tree on a database the caller made (`env.DATABASE_URL`) and resolves once every worker listens. */
export async function startServeTree(workers: number, env: Record<string, string>): Promise<ServeTree> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const proc: ChildProcess = spawn(
    process.execPath,
    [...GATEWAY_NODE_OPTIONS, join(root, 'bin', 'voxgate.js'), 'serve', '--workers', String(workers)],
    {
      cwd: root,
      // LOG_LEVEL info, the default: a deployment logs each call's start and end.
      env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  let apiKey: string | undefined
  let listening = 0
  let pending = ''
  let tail = ''
  proc.stdout!.setEncoding('utf8')
  proc.stdout!.on('data', (chunk: string) => {
    // Scanned line by line and not kept (a few hundred calls log thousands of lines), but for the last few for errors.
    const lines = (pending + chunk).split('\n')
    pending = lines.pop()!
    for (const line of lines) {
      apiKey ??= /API key:\s+(\S+)/.exec(line)?.[1]
      if (line.includes('voxgate listening')) listening++
    }
    tail = (tail + chunk).slice(-4000)
  })
  const exited = new Promise<void>((r) => proc.once('exit', () => r()))
  let gone = false
  void exited.then(() => (gone = true))
  const deadline = Date.now() + 120_000
  while (listening < workers || apiKey === undefined) {
    if (gone) throw new Error(`voxgate serve exited at start:\n${tail}`)
    if (Date.now() > deadline) {
      proc.kill('SIGKILL')
      throw new Error(`voxgate serve: ${listening} of ${workers} workers listening after 120 s:\n${tail}`)
    }
    await sleep(50)
  }
  const pid = proc.pid!
  const servingPids = workers === 1 ? [pid] : childrenOf(pid)
  if (servingPids.length !== workers) throw new Error(`expected ${workers} workers, found ${servingPids.length}`)
  return {
    url,
    apiKey,
    pid,
    servingPids,
    async stop(limitMs = 30_000) {
      if (gone) return
      const tree = [pid, ...childrenOf(pid)]
      proc.kill('SIGTERM')
      const timer = setTimeout(() => {
        for (const p of tree) {
          try {
            process.kill(p, 'SIGKILL')
          } catch {
            // already gone
          }
        }
      }, limitMs)
      await exited
      clearTimeout(timer)
    },
  }
}
