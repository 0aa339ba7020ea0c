import type { Middleware } from 'koa'
import { isVoxgateError, voxError, type VoxgateError } from '../../core/errors.js'
import type { Log } from '../../core/log.js'
import { isDatabaseUnavailable } from '../../gateway/store/database-errors.js'

/** Retry-After of a request refused because the database cannot be reached. */
const DATABASE_RETRY_AFTER_S = 2

/** The SPEC's error body, with our stable code and, for validation, the list of problems. */
export interface ErrorBody {
  error: string
  code: string
  details?: string[]
}

/** Turns an error into a client-safe body; unknown errors become `internal` and are logged in full. */
export function toErrorBody(e: VoxgateError): ErrorBody {
  return { error: e.message, code: e.code, ...(e.details && { details: e.details }) }
}

/**
 * Catches everything below it: registered errors become their status and body, koa's own http errors keep
 * their status with the registry's message, an unreachable database is a 503 with Retry-After, anything else
 * is a 500 whose cause goes to the log only.
 */
export function errorHandler(log: Log): Middleware {
  return async (ctx, next) => {
    try {
      await next()
      if (ctx.status === 404 && ctx.body === undefined) throw voxError('not_found', `no route for ${ctx.method} ${ctx.path}`)
    } catch (e) {
      let err: VoxgateError
      if (isVoxgateError(e)) {
        err = e
      } else {
        const status = (e as { status?: number }).status
        if (status === 405) err = voxError('method_not_allowed')
        else if (status === 413) err = voxError('payload_too_large')
        // A database restart or network cut: worth a retry in a moment, not a 500.
        else if (isDatabaseUnavailable(e)) err = voxError('database_unavailable', undefined, { retryAfterSeconds: DATABASE_RETRY_AFTER_S })
        else {
          log.error({ err: e, method: ctx.method, path: ctx.path }, 'request failed')
          err = voxError('internal')
        }
      }
      if (err.status >= 500 && err.code !== 'internal') log.warn({ code: err.code, path: ctx.path }, err.message)
      ctx.status = err.status
      if (err.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(Math.max(1, Math.ceil(err.retryAfterSeconds))))
      ctx.body = toErrorBody(err)
    }
  }
}
