import { pino, type Logger, type LoggerOptions } from 'pino'

/** Log paths that may hold secrets; pino replaces their values before anything is written. */
export const REDACT_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers["x-carrier-signature"]',
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
]

/** The process logger type; every part takes one as a dependency instead of importing a global. */
export type Log = Logger

/** Creates the process logger (JSON lines on stdout, secrets redacted). */
export function createLogger(level: string, options: Partial<LoggerOptions> = {}): Log {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { svc: 'voxgate' }, ...options })
}

/** A logger that drops everything, for tests that do not look at logs. */
export function silentLogger(): Log {
  return pino({ level: 'silent' })
}

/** Masks a URL's stream key or query secrets for logging: keeps the path shape, hides tokens. */
export function maskKeyInPath(path: string): string {
  return path.replace(/(websocket\/)[^/?]+/, '$1[redacted]').replace(/(client_session_key=)[^&]+/, '$1[redacted]')
}
