/**
 * `voxgate serve --workers N`: the primary of a node:cluster whose N workers are full replicas on one port (the
 * primary hands out connections round-robin) and one Postgres server. The primary migrates and seeds once,
 * restarts a worker that dies (its calls end as a crashed replica's do: another worker's sweeper ends them when
 * their leases expire), answers a scrape with every worker's metrics (cluster-metrics.ts), and on SIGTERM or
 * SIGINT tells every worker to drain; a second signal makes them exit.
 */
import cluster, { type Worker } from 'node:cluster'
import { vendorAvailability, type GatewayConfig } from '../server/config.js'
import type { Log } from '../core/log.js'
import { openStore } from '../gateway/store/database.js'
import { bootstrap, firstStartMessage } from '../server/bootstrap.js'
import { serveClusterMetrics } from './cluster-metrics.js'
import { missingGatewayNodeOptions } from '../server/gc-tuning.js'

/** What the primary tells a worker over the cluster's IPC channel. */
export type WorkerCommand = { readonly voxgate: 'drain' } | { readonly voxgate: 'exit-now' }

/** A worker that dies this soon after it started counts as a crash loop: its restart waits longer each time. */
const QUICK_DEATH_MS = 10_000
const RESTART_MIN_MS = 500
const RESTART_MAX_MS = 30_000

/** Runs the primary until every worker has exited after a shutdown; returns the exit code. */
export async function runPrimary(config: GatewayConfig, log: Log, writeStdout: (text: string) => void): Promise<number> {
  // Once, before any worker: N workers racing the first start would each create a default organization.
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })
  try {
    const first = await bootstrap(store.db, { vendors: vendorAvailability(config), publicUrl: config.publicUrl })
    if (first.firstStart) writeStdout(`${firstStartMessage(first.firstStart, config.publicUrl)}\n`)
  } finally {
    await store.close()
  }

  let stopping = false
  let restartMs = RESTART_MIN_MS
  const startedAt = new Map<Worker, number>()
  // Every worker runs with the gateway's Node options, even under a primary started without them.
  cluster.setupPrimary({ execArgv: [...process.execArgv, ...missingGatewayNodeOptions()] })
  const fork = () => {
    const w = cluster.fork()
    startedAt.set(w, Date.now())
  }
  return new Promise<number>((resolve) => {
    let exitCode = 0
    cluster.on('exit', (worker, code, signal) => {
      const lived = Date.now() - (startedAt.get(worker) ?? 0)
      startedAt.delete(worker)
      if (stopping) {
        if (code !== 0) exitCode = 1
        if (startedAt.size === 0) resolve(exitCode)
        return
      }
      restartMs = lived < QUICK_DEATH_MS ? Math.min(RESTART_MAX_MS, restartMs * 2) : RESTART_MIN_MS
      log.error({ worker_pid: worker.process.pid, code, signal, restart_in_ms: restartMs }, 'worker died; starting another')
      setTimeout(() => {
        if (!stopping) fork()
      }, restartMs).unref()
    })
    serveClusterMetrics()
    for (let i = 0; i < config.workers; i++) fork()
    log.info({ workers: config.workers, port: config.port }, 'voxgate primary started its workers')

    const tell = (cmd: WorkerCommand) => {
      for (const w of Object.values(cluster.workers ?? {})) {
        if (w?.isConnected()) w.send(cmd, () => undefined)
      }
    }
    const stop = (signal: string) => {
      if (stopping) {
        log.warn({ signal }, 'second signal: workers exit now')
        tell({ voxgate: 'exit-now' })
        return
      }
      stopping = true
      log.info({ signal }, 'draining every worker')
      tell({ voxgate: 'drain' })
      if (startedAt.size === 0) resolve(0)
      // The workers keep their own deadline; this one covers a worker that cannot even run its timers.
      setTimeout(() => {
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL')
        resolve(1)
      }, config.shutdownGraceMs + 15_000).unref()
    }
    process.on('SIGTERM', () => stop('SIGTERM'))
    process.on('SIGINT', () => stop('SIGINT'))
  })
}

/** In a worker: the primary's commands, as the worker's own signal handler would take them. */
export function onPrimaryCommand(handle: (cmd: WorkerCommand['voxgate']) => void): void {
  process.on('message', (m: unknown) => {
    if (typeof m !== 'object' || m === null) return
    const cmd = (m as { voxgate?: unknown }).voxgate
    if (cmd === 'drain' || cmd === 'exit-now') handle(cmd)
  })
}
