import { loadConfig, ConfigError, vendorAvailability, type GatewayConfig } from '../gateway/config.js'
import { createLogger } from '../core/log.js'
import { openStore } from '../gateway/store/database.js'
import { defaultPgliteTemplateDir } from '../gateway/store/pglite-template.js'
import { bootstrap, firstStartMessage } from '../gateway/bootstrap.js'
import { startGateway } from '../gateway/app.js'
import { warmUpSpeech } from '../gateway/warm-up.js'

/** `voxgate serve`: loads config, opens the store, migrates, seeds, listens; SIGTERM/SIGINT drain and exit. */
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
  const log = createLogger(config.logLevel)
  log.info({ database: config.databaseUrl ? 'server' : `embedded (${config.dataDir})` }, 'opening database')
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, pgliteTemplateDir: defaultPgliteTemplateDir() })
  const first = await bootstrap(store.db, { vendors: vendorAvailability(config), publicUrl: config.publicUrl })
  if (first.firstStart) process.stdout.write(`${firstStartMessage(first.firstStart, config.publicUrl)}\n`)
  const gateway = await startGateway({ config, store, log })
  log.info({ url: gateway.url, public_url: config.publicUrl }, 'voxgate listening')
  void warmUpSpeech(log)

  return new Promise<number>((resolve) => {
    let stopping = false
    const stop = (signal: string) => {
      if (stopping) return
      stopping = true
      log.info({ signal }, 'shutting down: no new sessions, ending live ones')
      const force = setTimeout(() => {
        log.warn('shutdown grace period over, exiting')
        resolve(1)
      }, config.shutdownGraceMs + 5_000)
      force.unref()
      gateway
        .close()
        .then(() => store.close())
        .then(
          () => resolve(0),
          (e: unknown) => {
            log.error({ err: e }, 'error during shutdown')
            resolve(1)
          },
        )
    }
    process.once('SIGTERM', () => stop('SIGTERM'))
    process.once('SIGINT', () => stop('SIGINT'))
  })
}
