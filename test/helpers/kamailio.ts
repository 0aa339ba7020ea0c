/**
 * Kamailio (the Debian package) as a SIP load balancer in front of gateway replicas: the project's own config,
 * docker/kamailio/kamailio.cfg, with its listen address and dispatcher list given as pre-processor defines; a
 * child process running as the current user on an unprivileged port, its runtime folder, pid file and list in a
 * temporary folder, logging to stderr (which the test reads). Closing kills its process group and removes the folder.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createSocket } from 'node:dgram'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Where the Debian package puts it. */
export const KAMAILIO_BIN = '/usr/sbin/kamailio'

/** The config the docs describe, run as it is. */
export const KAMAILIO_CONFIG = fileURLToPath(new URL('../../docker/kamailio/kamailio.cfg', import.meta.url))

/** True when Kamailio is installed here. */
export function hasKamailio(): boolean {
  return existsSync(KAMAILIO_BIN)
}

/** A running Kamailio. */
export interface Kamailio {
  readonly port: number
  readonly proc: ChildProcess
  /** What it logged so far. */
  log(): string
  close(): Promise<void>
}

/** Most of its log kept (a test reads its failover lines). */
const MAX_LOG_CHARS = 1_000_000

/**
 * Starts Kamailio on 127.0.0.1:`port` (UDP) dispatching to `replicas` (`host:port`, set 1). Resolves once an
 * OPTIONS sent through it has come back from a replica: it prints "Listening on" before its sockets are bound and
 * its workers run, so a request sent on that line alone may be lost (UDP, and the test phone does not retransmit).
 */
export async function startKamailio(port: number, replicas: readonly string[]): Promise<Kamailio> {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-kamailio-'))
  const list = join(dir, 'dispatcher.list')
  writeFileSync(list, replicas.map((r) => `1 sip:${r}\n`).join(''))
  const args = ['-f', KAMAILIO_CONFIG, '-P', join(dir, 'kamailio.pid'), '-Y', dir, '-w', dir, '-E', '-DD', '-m', '32', '-M', '4']
  args.push('-A', `SIP_LISTEN=udp:127.0.0.1:${port}`, '-A', `DISPATCHER_LIST="${list}"`)
  // Its own process group: the children it forks go with it at close.
  const proc = spawn(KAMAILIO_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let log = ''
  const append = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-MAX_LOG_CHARS)
  }
  proc.stdout?.on('data', append)
  proc.stderr?.on('data', append)
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  const close = async () => {
    if (proc.exitCode === null && proc.signalCode === null && proc.pid !== undefined) {
      try {
        process.kill(-proc.pid, 'SIGTERM')
      } catch {
        // Gone between the check and the kill.
      }
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`kamailio did not start:\n${log.slice(-3000)}`)), 10_000)
      const check = () => {
        if (/Listening on/.test(log) && new RegExp(`127\\.0\\.0\\.1 \\[127\\.0\\.0\\.1\\]:${port}`).test(log)) {
          clearTimeout(timer)
          resolve()
        }
      }
      proc.stdout?.on('data', check)
      proc.stderr?.on('data', check)
      void exited.then(() => {
        clearTimeout(timer)
        reject(new Error(`kamailio exited at start:\n${log.slice(-3000)}`))
      })
    })
  } catch (e) {
    await close()
    throw e
  }
  try {
    await answered(port, 10_000)
  } catch (e) {
    await close()
    throw new Error(`${(e as Error).message}\n${log.slice(-3000)}`)
  }
  return { port, proc, log: () => log, close }
}

/** Sends OPTIONS to 127.0.0.1:`port` every 250 ms (a new transaction each) until a response comes back. */
async function answered(port: number, timeoutMs: number): Promise<void> {
  const socket = createSocket('udp4')
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  const local = socket.address().port
  const probe = () => {
    const branch = `z9hG4bK${randomBytes(6).toString('hex')}`
    const lines = [
      `OPTIONS sip:127.0.0.1:${port} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=${branch};rport`,
      'Max-Forwards: 70',
      `From: <sip:probe@127.0.0.1>;tag=${randomBytes(4).toString('hex')}`,
      `To: <sip:127.0.0.1:${port}>`,
      `Call-ID: ${branch}@kamailio-probe`,
      'CSeq: 1 OPTIONS',
      'Content-Length: 0',
      '',
      '',
    ]
    socket.send(lines.join('\r\n'), port, '127.0.0.1')
  }
  let timer: NodeJS.Timeout | undefined
  let deadline: NodeJS.Timeout | undefined
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('message', () => resolve())
      deadline = setTimeout(() => reject(new Error(`kamailio answered no OPTIONS within ${timeoutMs} ms`)), timeoutMs)
      probe()
      timer = setInterval(probe, 250)
    })
  } finally {
    clearInterval(timer)
    clearTimeout(deadline)
    socket.close()
  }
}
