/** The narrow, pino-compatible logger the pipeline writes to: structured fields first, message second. */
export interface PipelineLogger {
  debug(fields: object, message?: string): void
  info(fields: object, message?: string): void
  warn(fields: object, message?: string): void
  error(fields: object, message?: string): void
}

/** A logger that discards everything (the default when none is given). */
export const silentLogger: PipelineLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
}
