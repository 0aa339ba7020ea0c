import { privacyLogOptions } from '../server/log-redaction.js'
import { loadConfig, ConfigError, vendorAvailability, type GatewayConfig } from '../server/config.js'
import { createLogger } from '../core/log.js'
import { openStore } from '../gateway/store/database.js'
import { defaultPgliteTemplateDir } from '../gateway/store/pglite-template.js'
import { bootstrap, firstStartMessage } from '../server/bootstrap.js'
import { startGateway } from '../server/app.js'
import { checkSpeechServers } from '../server/speech-servers.js'
import { warmUpSpeech } from '../server/warm-up.js'
import { missingGatewayNodeOptions } from '../server/gc-tuning.js'
import cluster from 'node:cluster'
import { onPrimaryCommand, runPrimary, type WorkerCommand } from './serve-workers.js'
import { clusterMetricsSource } from './cluster-metrics.js'

/**
 * `voxgate serve`: loads config, opens the store, migrates, seeds, listens. SIGTERM or SIGINT drains (see
 * README, Deploy recipe) and exits; a second one exits at once.
 */
export async function serve(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let config: GatewayConfig
  try {
    config = loadConfig(env)
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`voxgate: invalid configuration: ${e.message}\n`)
      return 2
    }
    throw e
  }
  // Card numbers and SSNs never reach a log line, whatever put them there.
  const log = createLogger(config.logLevel, privacyLogOptions())
  if (config.workers > 1 && cluster.isPrimary) return runPrimary(config, log, writeStdout)
  // A worker listens to its primary from the start: a shutdown told while it was still starting would otherwise be
  // lost, and the worker (and the primary waiting for it) would run for good. Exit-now ends a starting worker at
  // once; a drain is kept and applied once it serves.
  let onCommand: ((cmd: WorkerCommand['voxgate']) => void) | undefined
  let drainWhenUp = false
  if (cluster.isWorker) {
    onPrimaryCommand((cmd) => {
      if (onCommand !== undefined) onCommand(cmd)
      else if (cmd === 'exit-now') process.exit(1)
      else drainWhenUp = true
    })
  }
  log.info({ database: config.databaseUrl ? 'server' : `embedded (${config.dataDir})` }, 'opening database')
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    pgliteTemplateDir: defaultPgliteTemplateDir(),
    pgliteSharedBuffersMb: config.pgliteSharedBuffersMb,
  })
  const first = await bootstrap(store.db, { vendors: vendorAvailability(config), publicUrl: config.publicUrl })
  if (first.firstStart) writeStdout(`${firstStartMessage(first.firstStart, config.publicUrl)}\n`)
  const gateway = await startGateway({ config, store, log, metricsSource: cluster.isWorker ? clusterMetricsSource : undefined })
  log.info({ url: gateway.url, public_url: config.publicUrl }, 'voxgate listening')
  const missing = missingGatewayNodeOptions()
  if (missing.length > 0) {
    log.warn({ node_options: missing }, "Node was started without the gateway's options (npm start gives them): GC pauses are longer")
  }
  void warmUpSpeech(log)
  void checkSpeechServers(config.vendors, log)

  return new Promise<number>((resolve) => {
    let stopping = false
    const stop = (signal: string, escalate = true) => {
      if (stopping && !escalate) return
      if (stopping) {
        // The operator insists: no more waiting for calls or webhooks.
        log.warn({ signal }, 'second signal: exiting now')
        resolve(1)
        return
      }
      stopping = true
      gateway.sessions.drain()
      log.info(
        { signal, grace_ms: config.shutdownGraceMs },
        'draining: no new sessions; live ones go on until they end or the grace period passes',
      )
      // Whatever the sessions, webhooks or database do, the process ends a few seconds after the grace period.
      setTimeout(() => {
        log.warn('shutdown took too long, exiting')
        resolve(1)
      }, config.shutdownGraceMs + SHUTDOWN_SLACK_MS).unref()
      gateway
        .close(config.shutdownGraceMs)
        .then(() => store.close())
        .then(
          () => resolve(0),
          (e: unknown) => {
            log.error({ err: e }, 'error during shutdown')
            resolve(1)
          },
        )
    }
    if (cluster.isWorker) {
      // A terminal's Ctrl-C reaches the whole process group: the primary alone decides, and tells the workers.
      process.on('SIGINT', () => undefined)
      // A SIGTERM sent to the whole group reaches a worker twice, its own and the primary's drain, in either order:
      // together one drain. A worker's own second SIGTERM, or the primary's exit-now, is the escalation.
      let ownSignals = 0
      process.on('SIGTERM', () => {
        ownSignals++
        stop('SIGTERM', ownSignals > 1)
      })
      onCommand = (cmd) => (cmd === 'drain' ? stop('primary drain', false) : stop('primary exit-now'))
      if (drainWhenUp) onCommand('drain')
    } else {
      process.on('SIGTERM', () => stop('SIGTERM'))
      process.on('SIGINT', () => stop('SIGINT'))
    }
  })
}

/**
 * Beyond SHUTDOWN_GRACE_MS, what the end of a shutdown may take: the session.end webhooks (5 s at most), the
 * server's close and the database's; past it the process exits anyway.
 */
const SHUTDOWN_SLACK_MS = 8_000

/** Writes to stdout; a reader that went away (EPIPE) costs the text, not the process. */
function writeStdout(text: string): void {
  process.stdout.write(text, () => undefined)
}
