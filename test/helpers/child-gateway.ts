/**
 * A second gateway process on the same database server (run with tsx as a child): prints its URL on stdout
 * as `LISTENING <url>`. Used to prove limits and leases hold across processes.
 */
import { loadConfig } from '../../gateway/config.js'
import { silentLogger } from '../../core/log.js'
import { openStore } from '../../gateway/store/database.js'
import { startGateway } from '../../gateway/app.js'

const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' })
const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })
const gateway = await startGateway({ config, store, log: silentLogger() })
process.stdout.write(`LISTENING ${gateway.url}\n`)
process.on('SIGTERM', () => {
  void gateway
    .close()
    .then(() => store.close())
    .then(() => process.exit(0))
})
