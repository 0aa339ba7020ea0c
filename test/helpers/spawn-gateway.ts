/** Runs test/helpers/child-gateway.ts as a separate OS process on the same database server. */
import { spawn, type ChildProcess } from 'node:child_process'
import { nodeScript } from './node-script.js'

export interface ChildGateway {
  url: string
  /** Its session manager's lease owner (the `lease_owner` of the sessions it runs). */
  leaseOwner: string
  proc: ChildProcess
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  kill(signal?: NodeJS.Signals): Promise<void>
}

/** Starts a child gateway with `env` added to this process's; `port` makes it listen there instead of on any free port. */
export async function spawnGateway(env: Record<string, string>, options: { port?: number } = {}): Promise<ChildGateway> {
  const script = new URL('./child-gateway.ts', import.meta.url)
  const proc = spawn(process.execPath, nodeScript(script), {
    env: { ...process.env, ...env, ...(options.port !== undefined && { CHILD_GATEWAY_PORT: String(options.port) }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const { url, leaseOwner } = await new Promise<{ url: string; leaseOwner: string }>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error('child gateway did not start')), 60_000)
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /LISTENING (\S+) (\S+)\n/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve({ url: m[1] as string, leaseOwner: m[2] as string })
      }
    })
    proc.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`child gateway exited with ${code}`))
    })
  })
  return {
    url,
    leaseOwner,
    proc,
    exited,
    kill(signal = 'SIGKILL') {
      return new Promise((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve()
        proc.once('exit', () => resolve())
        proc.kill(signal)
      })
    },
  }
}
