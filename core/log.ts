import { pino, type Logger, type LoggerOptions } from 'pino'
import { boundedFlushSync } from './log-exit-flush.js'

/** Log paths that may hold secrets; pino replaces their values before anything is written. */
export const REDACT_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers["x-carrier-signature"]',
  'req.headers["x-twilio-signature"]',
  'auth_token',
  'authToken',
  'api_key',
  'apiKey',
  'client_session_key',
  'webhook_secret',
  '*.auth_token',
  '*.authToken',
  '*.api_key',
  '*.apiKey',
  '*.client_session_key',
  '*.webhook_secret',
  // SRTP master keys (transports/sip/srtp): a call's LocalSrtp and its negotiated keys.
  'keySalt',
  '*.keySalt',
  'srtp',
  '*.srtp',
]

/** The process logger type; every part takes one as a dependency instead of importing a global. */
export type Log = Logger

/** Log bytes held for a slow log collector before lines are dropped. */
export const LOG_BUFFER_BYTES = 4 * 1024 * 1024

/** Consecutive 100 ms waits for a full stdout pipe before its pending lines are given up. */
const LOG_FULL_PIPE_RETRIES = 20

/**
 * The process's log destination: stdout, written asynchronously, so a log collector that stalls costs log
 * lines, never the event loop (the audio path must not wait on logs): at most LOG_BUFFER_BYTES wait, newer lines
 * are dropped beyond. A collector that went away (EPIPE) turns logging off instead of crashing the process
 * (pino's own filter), and a full pipe is retried a bounded number of times. The flush pino runs at exit is
 * bounded too (`boundedFlushSync`): a process whose stdout reader is gone still exits.
 */
export function stdoutLogDestination(fd = 1): ReturnType<typeof pino.destination> {
  let retries = 0
  const dest = pino.destination({
    dest: fd,
    sync: false,
    maxLength: LOG_BUFFER_BYTES,
    retryEAGAIN: () => {
      retries += 1
      return retries <= LOG_FULL_PIPE_RETRIES
    },
  })
  dest.on('write', () => {
    retries = 0
  })
  // Every other write error (a full pipe given up, EPIPE after pino's filter) only costs log lines.
  dest.on('error', () => undefined)
  // sonic-boom's own flushSync retries EPIPE every 100 ms for ever: at exit, with the reader gone, a hang.
  dest.flushSync = () => boundedFlushSync(dest)
  return dest
}

/** Creates the process logger (JSON lines on stdout unless `destination` says otherwise, secrets redacted). */
export function createLogger(
  level: string,
  options: Partial<LoggerOptions> = {},
  destination: Parameters<typeof pino>[1] = stdoutLogDestination(),
): Log {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { svc: 'voxgate' }, ...options }, destination)
}

/** A logger that drops everything, for tests that do not look at logs. */
export function silentLogger(): Log {
  return pino({ level: 'silent' })
}

/** Masks a URL's stream key or query secrets for logging: keeps the path shape, hides tokens. */
export function maskKeyInPath(path: string): string {
  return path.replace(/(websocket\/)[^/?]+/, '$1[redacted]').replace(/(client_session_key=)[^&]+/, '$1[redacted]')
}
