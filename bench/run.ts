// Benchmark harness: `npm run bench` runs every module below; `npm run bench -- <filter>...` runs those whose
// name contains any filter (`soak` runs only when named). Add a module by appending to `benches`; each exports `bench(options)` returning rows.
import type { BenchFn, BenchRow } from './bench-util.js'

interface BenchEntry {
  name: string
  load: () => Promise<{ bench: BenchFn }>
  /** Runs only when named (the hour-long soak is not part of a plain `npm run bench`). */
  onlyWhenNamed?: boolean
}

const benches: BenchEntry[] = [
  { name: 'codec', load: () => import('./codec.bench.js') },
  { name: 'srtp', load: () => import('./srtp.bench.js') },
  { name: 'sip-media', load: () => import('./sip-media.bench.js') },
  { name: 'beep-detector', load: () => import('./beep-detector.bench.js') },
  { name: 'resampler', load: () => import('./resampler.bench.js') },
  { name: 'redaction', load: () => import('./redaction.bench.js') },
  { name: 'vad-model', load: () => import('./vad-model.bench.js') },
  { name: 'vad-calls', load: () => import('./vad-calls.bench.js') },
  { name: 'vad-rate', load: () => import('./vad-rate.bench.js') },
  { name: 'carrier-calls', load: () => import('./carrier-calls.bench.js') },
  { name: 'sip-calls', load: () => import('./sip-calls.bench.js') },
  { name: 'carrier-workers', load: () => import('./carrier-workers.bench.js') },
  { name: 'pipeline-latency', load: () => import('./pipeline-latency.bench.js') },
  { name: 'startup', load: () => import('./startup.bench.js') },
  { name: 'tunnel-latency', load: () => import('./tunnel-latency.bench.js') },
  { name: 'transfer-bridge', load: () => import('./transfer-bridge.bench.js') },
  { name: 'stt-segments', load: () => import('./stt-segments.bench.js') },
  { name: 'conversations', load: () => import('./conversations.bench.js') },
  { name: 'campaign', load: () => import('./campaign.bench.js') },
  { name: 'soak', load: () => import('./soak.bench.js'), onlyWhenNamed: true },
]

function printTable(rows: BenchRow[]): void {
  if (rows.length === 0) {
    console.log('(no rows)')
    return
  }
  const cols: string[] = []
  for (const r of rows) for (const k of Object.keys(r)) if (!cols.includes(k)) cols.push(k)
  const cell = (r: BenchRow, c: string): string => String(r[c] ?? '')
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r, c).length)))
  const line = (vals: string[]): string =>
    `| ${vals.map((v, i) => (typeof rows[0]![cols[i]!] === 'number' ? v.padStart(width[i]!) : v.padEnd(width[i]!))).join(' | ')} |`
  console.log(line(cols))
  console.log(`|${width.map((w) => '-'.repeat(w + 2)).join('|')}|`)
  for (const r of rows) console.log(line(cols.map((c) => cell(r, c))))
}

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((a) => a !== '--')
  const repeatsArg = args.find((a) => a.startsWith('--repeats='))
  const repeats = repeatsArg === undefined ? 5 : Math.max(1, Number(repeatsArg.slice('--repeats='.length)))
  const filters = args.filter((a) => !a.startsWith('--'))
  const selected =
    filters.length === 0 ? benches.filter((b) => !b.onlyWhenNamed) : benches.filter((b) => filters.some((f) => b.name.includes(f)))
  if (selected.length === 0) {
    console.error(`no benchmark matches ${filters.join(', ')}; known: ${benches.map((b) => b.name).join(', ')}`)
    process.exitCode = 1
    return
  }
  for (const b of selected) {
    console.log(`\n## ${b.name}\n`)
    const t0 = performance.now()
    const { bench } = await b.load()
    printTable(await bench({ repeats }))
    console.log(`\n(${((performance.now() - t0) / 1000).toFixed(1)} s, ${repeats} repeats)`)
  }
}

await main()
