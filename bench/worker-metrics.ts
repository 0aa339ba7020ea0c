// Scraping `/metrics` of `voxgate serve --workers N` from outside, worker by worker. A scrape lands on whichever
// worker the primary hands the connection to, and nothing in the text says which one it was; so each scrape keeps
// its connection open (keep-alive) until the body has arrived, and /proc tells which worker holds the server end.
import http from 'node:http'
import { socketOwner } from './proc-stats.js'

/** One scrape's samples, keyed by the series as written (`name{label="v"}`). */
export type Samples = Map<string, number>

/** Parses the Prometheus text format (comments skipped; no timestamps, as prom-client writes none). */
export function parseSamples(text: string): Samples {
  const out: Samples = new Map()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const cut = line.lastIndexOf(' ')
    out.set(line.slice(0, cut), Number(line.slice(cut + 1)))
  }
  return out
}

/** One scrape of `url` and the pid (among `pids`) that answered it, if /proc could tell. */
async function scrapeOnce(url: URL, pids: readonly number[]): Promise<{ pid: number | undefined; samples: Samples }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  try {
    const { text, clientPort } = await new Promise<{ text: string; clientPort: number }>((resolve, reject) => {
      const req = http.get(url, { agent }, (res) => {
        const clientPort = res.socket.localPort!
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => (text += c))
        res.on('end', () => (res.statusCode === 200 ? resolve({ text, clientPort }) : reject(new Error(`/metrics: ${res.statusCode}`))))
        res.on('error', reject)
      })
      req.on('error', reject)
    })
    // The agent still holds the connection, so the worker that answered still holds its end.
    return { pid: socketOwner(Number(url.port), clientPort, pids), samples: parseSamples(text) }
  } finally {
    agent.destroy()
  }
}

/**
 * Scrapes until every worker of `pids` has answered once (each new connection goes to the next worker, so this
 * takes about N scrapes); throws after `maxScrapes`.
 */
export async function scrapeEveryWorker(baseUrl: string, pids: readonly number[], maxScrapes = 60): Promise<Map<number, Samples>> {
  const url = new URL('/metrics', baseUrl)
  const seen = new Map<number, Samples>()
  for (let i = 0; i < maxScrapes && seen.size < pids.length; i++) {
    const { pid, samples } = await scrapeOnce(url, pids)
    if (pid !== undefined && !seen.has(pid)) seen.set(pid, samples)
  }
  if (seen.size < pids.length) throw new Error(`scraped ${seen.size} of ${pids.length} workers in ${maxScrapes} scrapes`)
  return seen
}

/** A cumulative histogram: upper bound (seconds, Infinity last) -> observations at or below it. */
export interface Histogram {
  buckets: { le: number; count: number }[]
  sum: number
  count: number
}

/** Histogram `name` (no labels but `le`) in `s`. */
export function histogram(s: Samples, name: string): Histogram {
  const buckets: { le: number; count: number }[] = []
  const prefix = `${name}_bucket{le="`
  for (const [key, v] of s) {
    if (!key.startsWith(prefix)) continue
    const le = key.slice(prefix.length, -2)
    buckets.push({ le: le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), count: v })
  }
  buckets.sort((a, b) => a.le - b.le)
  return { buckets, sum: s.get(`${name}_sum`) ?? 0, count: s.get(`${name}_count`) ?? 0 }
}

/** `after` minus `before`, bucket by bucket (the same histogram of one process, later and earlier). */
export function histogramDelta(before: Histogram, after: Histogram): Histogram {
  return {
    buckets: after.buckets.map((b, i) => ({ le: b.le, count: b.count - (before.buckets[i]?.count ?? 0) })),
    sum: after.sum - before.sum,
    count: after.count - before.count,
  }
}

/** Several processes' histograms as one (same buckets). */
export function histogramSum(hs: readonly Histogram[]): Histogram {
  const first = hs[0] ?? { buckets: [], sum: 0, count: 0 }
  return {
    buckets: first.buckets.map((b, i) => ({ le: b.le, count: hs.reduce((n, h) => n + (h.buckets[i]?.count ?? 0), 0) })),
    sum: hs.reduce((n, h) => n + h.sum, 0),
    count: hs.reduce((n, h) => n + h.count, 0),
  }
}

/**
 * The share of observations above `le`, which must be one of the bucket bounds: exact, where a quantile read
 * from buckets this coarse (0.1, 0.25, 0.5 s) would only be interpolated.
 */
export function shareAbove(h: Histogram, le: number): number {
  const b = h.buckets.find((x) => x.le === le)
  if (b === undefined) throw new Error(`no bucket le=${le}`)
  return h.count === 0 ? Number.NaN : (h.count - b.count) / h.count
}
