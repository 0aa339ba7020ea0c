// What Linux's /proc says about other processes: CPU time, children, the machine's CPU, and which process holds
// the server end of a TCP connection. Lets a benchmark measure a process tree it only started, from outside.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on every Linux build that matters here). */
const TICKS_PER_S = 100

/**
 * Fields of a /proc stat file (`/proc/<pid>/stat`, or a thread's `/proc/<pid>/task/<tid>/stat`) after the command
 * name (which may hold spaces): [0] is the state, field 3.
 */
function statFields(file: string): string[] | undefined {
  try {
    const text = readFileSync(file, 'utf8')
    return text.slice(text.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

/** CPU time (user + system) of a process or thread by its stat file, ms; NaN once it is gone. */
function cpuMsIn(file: string): number {
  const f = statFields(file)
  // utime and stime are fields 14 and 15.
  return f === undefined ? Number.NaN : ((Number(f[11]) + Number(f[12])) * 1000) / TICKS_PER_S
}

/** CPU time (user + system) process `pid` has used so far, ms; NaN once it is gone. */
export function cpuMsOf(pid: number): number {
  return cpuMsIn(`/proc/${pid}/stat`)
}

/**
 * CPU time (user + system) of this process's main thread so far, ms (`/proc/self/task/<pid>`): the event loop's
 * share of the process's CPU, the rest being V8's and libuv's helper threads.
 */
export function mainThreadCpuMs(): number {
  return cpuMsIn(`/proc/self/task/${process.pid}/stat`)
}

/** Every live process, with its parent and command name. */
function processes(): { pid: number; ppid: number; comm: string }[] {
  const out: { pid: number; ppid: number; comm: string }[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const pid = Number(name)
    let comm: string
    try {
      comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
    } catch {
      continue
    }
    const f = statFields(`/proc/${pid}/stat`)
    if (f !== undefined) out.push({ pid, ppid: Number(f[1]), comm })
  }
  return out
}

/** The children of `pid` (not their children). */
export function childrenOf(pid: number): number[] {
  return processes()
    .filter((p) => p.ppid === pid)
    .map((p) => p.pid)
}

/** Every process whose command name is `comm` (e.g. every Postgres backend: `postgres`). */
export function pidsNamed(comm: string): number[] {
  return processes()
    .filter((p) => p.comm === comm)
    .map((p) => p.pid)
}

/** The machine's CPU time so far over all cores, ms: busy (steal excluded), stolen by the host, and in all. */
export interface MachineCpu {
  busyMs: number
  stealMs: number
  totalMs: number
}

/** The first line of /proc/stat, summed over the cores. */
export function machineCpu(): MachineCpu {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest time is inside user already)
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1, 9).map(Number) as number[]
  const ms = (ticks: number) => (ticks * 1000) / TICKS_PER_S
  const busy = user! + nice! + system! + irq! + softirq!
  return { busyMs: ms(busy), stealMs: ms(steal!), totalMs: ms(busy + idle! + iowait! + steal!) }
}

/** The socket inode of the accepted TCP connection on local port `serverPort` from remote port `clientPort`. */
function serverSocketInode(serverPort: number, clientPort: number): string | undefined {
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      continue
    }
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode; ports in hex.
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      if (f.length < 10) continue
      const port = (addr: string) => Number.parseInt(addr.slice(addr.lastIndexOf(':') + 1), 16)
      // State 01 is ESTABLISHED: an old connection from the same port may linger in TIME_WAIT (inode 0).
      if (f[3] === '01' && port(f[1]!) === serverPort && port(f[2]!) === clientPort) return f[9]
    }
  }
  return undefined
}

/**
 * Which of `pids` holds the server end of the connection from local `clientPort` to `serverPort` (on this
 * machine, in this network namespace); undefined when none does (yet, or any more).
 */
export function socketOwner(serverPort: number, clientPort: number, pids: readonly number[]): number | undefined {
  const inode = serverSocketInode(serverPort, clientPort)
  if (inode === undefined) return undefined
  const target = `socket:[${inode}]`
  for (const pid of pids) {
    let fds: string[]
    try {
      fds = readdirSync(`/proc/${pid}/fd`)
    } catch {
      continue
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === target) return pid
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined
}
