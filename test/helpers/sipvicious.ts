/**
 * Debian's sipvicious (svwar, svcrack): the scanners attackers point at public SIP ports, run as they are, with
 * their stock User-Agent or (through test/sip/fixtures/sipvicious/with-user-agent.py) another one.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** Why sipvicious cannot run here, or false. */
export const sipviciousMissing: string | false =
  existsSync('/usr/bin/svwar') && existsSync('/usr/bin/svcrack') ? false : 'sipvicious (svwar, svcrack) is not installed'

const WRAPPER = fileURLToPath(new URL('../sip/fixtures/sipvicious/with-user-agent.py', import.meta.url))

/** How a run ended: its exit code (null when stopped), and what it wrote. */
export interface SipviciousRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** True when `stopWhen` matched and the run was stopped. */
  readonly stopped: boolean
  /** True when `timeoutMs` passed and the run was stopped. */
  readonly timedOut: boolean
}

/**
 * Runs `tool` with `args`. `userAgent` replaces the stock one; `stopWhen` stops it (SIGTERM) `graceMs` after its
 * stderr matches; `timeoutMs` stops it in any case.
 */
export function runSipvicious(
  tool: 'svwar' | 'svcrack',
  args: readonly string[],
  options: { userAgent?: string; md5Challenge?: boolean; stopWhen?: RegExp; graceMs?: number; timeoutMs?: number } = {},
): Promise<SipviciousRun> {
  const patched = options.userAgent !== undefined || options.md5Challenge === true
  const wrapper = [WRAPPER, ...(options.md5Challenge === true ? ['--md5-challenge'] : []), options.userAgent ?? 'friendly-scanner']
  const [command, argv] = patched ? ['python3', [...wrapper, tool, ...args]] : [`/usr/bin/${tool}`, [...args]]
  const child = spawn(command, argv, { env: { ...process.env, PYTHONUNBUFFERED: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  let stopped = false
  let timedOut = false
  const timers: NodeJS.Timeout[] = []
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
  }
  child.stdout.on('data', (b: Buffer) => {
    stdout += b.toString()
  })
  child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString()
    if (!stopped && options.stopWhen?.test(stderr) === true) {
      stopped = true
      timers.push(setTimeout(stop, options.graceMs ?? 1_000))
    }
  })
  timers.push(
    setTimeout(() => {
      timedOut = true
      stop()
    }, options.timeoutMs ?? 30_000),
  )
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => {
      for (const timer of timers) clearTimeout(timer)
      resolve({ code, stdout, stderr, stopped, timedOut })
    })
  })
}
