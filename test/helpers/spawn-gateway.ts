/** Runs test/helpers/child-gateway.ts as a separate OS process on the same database server. */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export interface ChildGateway {
  url: string
  proc: ChildProcess
  kill(signal?: NodeJS.Signals): Promise<void>
}

export async function spawnGateway(env: Record<string, string>): Promise<ChildGateway> {
  const script = fileURLToPath(new URL('./child-gateway.ts', import.meta.url))
  const proc = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error('child gateway did not start')), 60_000)
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /LISTENING (\S+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(m[1] as string)
      }
    })
    proc.once('exit', (code) => reject(new Error(`child gateway exited with ${code}`)))
  })
  return {
    url,
    proc,
    kill(signal = 'SIGKILL') {
      return new Promise((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve()
        proc.once('exit', () => resolve())
        proc.kill(signal)
      })
    },
  }
}
