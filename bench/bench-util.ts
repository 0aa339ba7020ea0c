/** One result row of a benchmark; columns are printed in insertion order. */
export type BenchRow = Record<string, string | number>

/** Options every benchmark module receives. */
export interface BenchOptions {
  /** Times each measurement is repeated (best and median are reported). */
  repeats: number
}

/** A benchmark module's entry point. */
export type BenchFn = (options: BenchOptions) => Promise<BenchRow[]>

/** Best and median of repeated throughput measurements (units per second). */
export interface Throughput {
  best: number
  median: number
}

/** CPU time (user + system) of this process in ms; ORT runs on the calling thread with 1 intra-op thread. */
export function cpuMs(): number {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

/**
 * Run `body` (which processes `units` units per call) repeatedly for at least `minMs` per repeat and return
 * units per CPU-second of this process, best and median over `repeats`. CPU time rather than wall time because
 * other engineers' processes share the machine's 2 cores; repeats because even CPU time is noisy under load.
 */
export async function throughput(
  units: number,
  body: () => unknown,
  options: { repeats: number; minMs?: number; warmup?: number },
): Promise<Throughput> {
  const minMs = options.minMs ?? 300
  for (let i = 0; i < (options.warmup ?? 3); i++) await body()
  const rates: number[] = []
  for (let r = 0; r < options.repeats; r++) {
    let calls = 0
    const t0 = performance.now()
    const c0 = cpuMs()
    do {
      await body()
      calls++
    } while (performance.now() - t0 < minMs)
    rates.push((calls * units) / (Math.max(cpuMs() - c0, 0.001) / 1000))
  }
  return summarize(rates)
}

/** Best (max) and median of rates. */
export function summarize(rates: number[]): Throughput {
  const sorted = [...rates].sort((a, b) => a - b)
  return { best: sorted[sorted.length - 1] ?? 0, median: sorted[Math.floor(sorted.length / 2)] ?? 0 }
}

/** Format a number with 3 significant digits (integers above 1000 unchanged). */
export function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n)
  if (Math.abs(n) >= 1000) return Math.round(n).toString()
  return n.toPrecision(3)
}
