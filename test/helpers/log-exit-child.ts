/**
 * A process that logs through the gateway's stdout logger and exits while lines are still buffered: on a line
 * on stdin it logs LINES lines in one go (the first starts an asynchronous write, the rest wait in the buffer)
 * and calls process.exit(EXIT_CODE) in the same tick, so pino's exit flush has them all to write.
 */
import { createLogger } from '../../core/log.js'

const log = createLogger('info')
const lines = Number(process.env.LINES ?? '50')
process.stdin.once('data', () => {
  for (let i = 0; i < lines; i++) log.info({ i, pad: 'x'.repeat(100) }, 'buffered at exit')
  process.exit(Number(process.env.EXIT_CODE ?? '0'))
})
