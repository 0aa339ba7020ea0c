// Event-loop stalls on a clock shared by processes, and how much of one process's stalls another process saw too.
//
// Why: this machine is a VM whose guest is paused now and then by its host. Two idle Node processes, doing nothing
// but a 1 ms timer, both see the same 20 to 60 ms gap at the same moment, about once every 30 s. A benchmark that
// asks "was any frame later than 20 ms" must not blame the gateway for those, so an idle sentinel process records
// its own stalls, and a gateway stall counts only for the part the sentinel did not also sit through.

import { readFileSync } from 'node:fs'

/** One stall: the loop ran no timer from `from` to `to` (ms since the Unix epoch, sub-ms precision). */
export interface Stall {
  from: number
  to: number
  /** With `cpu` on: the process's CPU time (ms, all threads) over the stall; near its length, the loop was busy. */
  cpuMs?: number
  /**
   * With `cpu` on, on Linux: the main thread's time on a CPU and waiting for one (ms, the scheduler's
   * /proc/self/task/<pid>/schedstat) over the stall. A long wait: other threads (ours or another process's) held
   * both cores while the loop had work.
   */
  mainRanMs?: number
  mainWaitedMs?: number
}

/** Now in ms since the epoch, with the precision of performance.now(): comparable across processes on one host. */
export function sharedNow(): number {
  return performance.timeOrigin + performance.now()
}

/** Records gaps longer than `minMs` between runs of a 1 ms timer, until stopped. */
export class StallRecorder {
  readonly stalls: Stall[] = []
  #timer: NodeJS.Timeout | undefined
  #last = 0
  #lastCpu = 0
  #lastSched: readonly [number, number] = [0, 0]

  /** `cpu`: note each stall's CPU time (one getrusage a tick: for a diagnosis, not for the figures). */
  constructor(
    private readonly minMs = 2,
    private readonly cpu = false,
  ) {}

  start(): void {
    this.#last = sharedNow()
    this.#lastCpu = this.#cpuNow()
    this.#lastSched = this.#schedNow()
    this.#timer = setInterval(() => {
      const now = sharedNow()
      const cpu = this.#cpuNow()
      const sched = this.#schedNow()
      if (now - this.#last > this.minMs) {
        const [ran, waited] = this.#lastSched
        this.stalls.push({
          from: this.#last,
          to: now,
          ...(this.cpu && { cpuMs: cpu - this.#lastCpu, mainRanMs: sched[0] - ran, mainWaitedMs: sched[1] - waited }),
        })
      }
      this.#last = now
      this.#lastCpu = cpu
      this.#lastSched = sched
    }, 1)
  }

  /** The main thread's ms on a CPU and waiting in the run queue so far; NaN where /proc does not say. */
  #schedNow(): readonly [number, number] {
    if (!this.cpu) return [0, 0]
    try {
      const [ran, waited] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')
      return [Number(ran) / 1e6, Number(waited) / 1e6]
    } catch {
      return [Number.NaN, Number.NaN]
    }
  }

  #cpuNow(): number {
    if (!this.cpu) return 0
    const u = process.cpuUsage()
    return (u.user + u.system) / 1000
  }

  stop(): Stall[] {
    clearInterval(this.#timer)
    return this.stalls
  }
}

/** Length of `s` not covered by any of `others` (which may overlap each other). */
export function uncovered(s: Stall, others: readonly Stall[]): number {
  const parts = others
    .filter((o) => o.to > s.from && o.from < s.to)
    .map((o) => ({ from: Math.max(o.from, s.from), to: Math.min(o.to, s.to) }))
    .sort((a, b) => a.from - b.from)
  let covered = 0
  let end = s.from
  for (const p of parts) {
    if (p.to <= end) continue
    covered += p.to - Math.max(p.from, end)
    end = p.to
  }
  return s.to - s.from - covered
}
