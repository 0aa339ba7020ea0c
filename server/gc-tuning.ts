/**
 * Garbage collection tuned for the audio path, in two parts.
 *
 * At run time: V8's old generation may grow to twice its live size before a full (mark-compact) collection,
 * instead of the 10-40% V8 allowed (measured) a process that spends little time collecting. Why: every full
 * collection stops the event loop for 3-12 ms (measured at 100 calls, bench/soak), and frames that arrive meanwhile
 * wait behind it. A gateway's live heap is small and steady (about 46 MB at 100 calls) while it promotes about
 * 1 MB/s of short-lived turn objects, so V8 ran a full collection every 5 s; with twice the room it runs one every
 * 20 s, for about 10 MB more resident memory at that load. A process started with its own `--heap-growing-percent`
 * keeps it.
 *
 * At start (Node's own options, which a running process cannot change): one V8 helper thread instead of Node's
 * default four (`--v8-pool-size=1`). Why: a full collection's final pause has the event loop wait for the helpers'
 * share of the marking and compaction, and on a machine with a core per gateway process (2 cores: the gateway and
 * Postgres or the rest) four helpers queue behind the busy cores while the loop waits. At 300 recorded calls on 2
 * cores, alternately, 8 runs each: the longest collection pause had a median of 4.3 ms against 8.0, and the 20 ms
 * rule held in all 8 against 7; in 23 earlier runs each, it broke 0 times against 4 (docs/benchmarks.md). `npm start`, the Docker image and
 * `bin/voxgate.js`'s first line start Node with `GATEWAY_NODE_OPTIONS`; `serve --workers` gives them to its workers.
 */
import { setFlagsFromString } from 'node:v8'

/** The old generation's allowed growth over its live size, in percent (V8's `--heap-growing-percent`). */
export const HEAP_GROWING_PERCENT = 100

/** Node options a gateway process is started with (package.json's start script, docker/Dockerfile, bin/voxgate.js). */
export const GATEWAY_NODE_OPTIONS: readonly string[] = ['--v8-pool-size=1']

let tuned = false

/** Applies the run-time tuning to this process once; V8 reads the flag at each full collection, so it takes effect at once. */
export function tuneGarbageCollection(): void {
  if (tuned) return
  tuned = true
  // Only on the command line: Node refuses this V8 option in NODE_OPTIONS.
  if (process.execArgv.some((a) => optionName(a) === '--heap-growing-percent')) return
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`)
}

/**
 * Which of `GATEWAY_NODE_OPTIONS` this process was started without, neither on its command line nor in
 * NODE_OPTIONS; an option given with another value counts as chosen (the operator's).
 */
export function missingGatewayNodeOptions(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].map(optionName)
  return GATEWAY_NODE_OPTIONS.filter((o) => !given.includes(optionName(o)))
}

/** An option's name without its value, as Node reads it (underscores and dashes alike): `--v8_pool_size=4` -> `--v8-pool-size`. */
function optionName(arg: string): string {
  return (arg.split('=')[0] ?? '').replaceAll('_', '-')
}
