/**
 * Runs the `voxgate` command as a user does: `node bin/voxgate.js ...` (what `npx voxgate` runs), a real process
 * with its own environment, stdout, stderr and exit code. XDG_CONFIG_HOME defaults to a fresh folder, so no test
 * reads or writes the real user's login.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const BIN = fileURLToPath(new URL('../../bin/voxgate.js', import.meta.url))

/** A running `voxgate` process. */
export interface CliProcess {
  proc: ChildProcess
  stdout(): string
  stderr(): string
  exited: Promise<number | null>
  /** Resolves with stdout once it matches `re` (rejects when the process ends first or after `timeoutMs`). */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpExecArray>
}

/** A fresh config folder for one test (XDG_CONFIG_HOME). */
export function tempConfigHome(): string {
  return mkdtempSync(join(tmpdir(), 'voxgate-xdg-'))
}

/** Starts `voxgate <args>` in `cwd` with `env` added to this process's environment. */
export function spawnCli(args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): CliProcess {
  const proc = spawn(process.execPath, [BIN, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, XDG_CONFIG_HOME: tempConfigHome(), VOXGATE_NO_BROWSER: '1', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  const waiters = new Set<() => void>()
  proc.stdout!.on('data', (c: Buffer) => {
    out += c.toString()
    for (const w of [...waiters]) w()
  })
  proc.stderr!.on('data', (c: Buffer) => (err += c.toString()))
  const exited = new Promise<number | null>((resolve) => proc.once('close', (code) => resolve(code)))
  return {
    proc,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(re, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = re.exec(out)
          if (m === null) return
          done()
          resolve(m)
        }
        const timer = setTimeout(() => {
          done()
          reject(new Error(`voxgate ${args[0]}: no ${re} in stdout after ${timeoutMs} ms\nstdout: ${out}\nstderr: ${err}`))
        }, timeoutMs)
        const done = () => {
          clearTimeout(timer)
          waiters.delete(check)
        }
        waiters.add(check)
        void exited.then(() => {
          if (!waiters.has(check)) return
          done()
          reject(new Error(`voxgate ${args[0]} exited before ${re}\nstdout: ${out}\nstderr: ${err}`))
        })
        check()
      })
    },
  }
}

/** Runs `voxgate <args>` to its end. */
export async function runCli(
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = spawnCli(args, opts)
  const code = await p.exited
  return { code, stdout: p.stdout(), stderr: p.stderr() }
}
