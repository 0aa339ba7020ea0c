/**
 * A second gateway process on the same database server (run with tsx as a child): prints its URL and lease owner
 * on stdout as `LISTENING <url> <owner>`. Used to prove limits and leases hold across processes, and as a replica
 * behind a balancer. `CHILD_GATEWAY_PORT` picks its port (default: any free one), so a replacement can take the
 * place of the replica it replaces.
 */
import { loadConfig } from '../../server/config.js'
import { silentLogger } from '../../core/log.js'
import { openStore } from '../../gateway/store/database.js'
import { startGateway } from '../../server/app.js'

const config = loadConfig({ ...process.env, PORT: process.env.CHILD_GATEWAY_PORT ?? '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' })
const store = await openStore({
  databaseUrl: config.databaseUrl,
  dataDir: config.dataDir,
  pgliteSharedBuffersMb: config.pgliteSharedBuffersMb,
})
const gateway = await startGateway({ config, store, log: silentLogger() })
process.stdout.write(`LISTENING ${gateway.url} ${gateway.sessions.keeper.owner}\n`)
// SIGTERM drains as `voxgate serve` does, with its grace period when the test sets SHUTDOWN_GRACE_MS; without it,
// live sessions end at once (what the tests that stop a child at teardown want).
const graceMs = process.env.SHUTDOWN_GRACE_MS === undefined ? 0 : config.shutdownGraceMs
process.on('SIGTERM', () => {
  gateway.sessions.drain()
  void gateway
    .close(graceMs)
    .then(() => store.close())
    .then(() => process.exit(0))
})
