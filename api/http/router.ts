import Router, { type RouterOptions } from '@koa/router'

/**
 * A router whose paths match case-sensitively, the only way this code base makes one. @koa/router matches routes
 * case-insensitively by default while a prefix's middleware (`r.use(check)` on `{ prefix: '/admin/v1' }`) is a
 * plain, case-sensitive regular expression: `/ADMIN/v1/...` reached the routes and skipped the check. One spelling
 * for both closes that: `/ADMIN/v1/...` and `/V1/...` match nothing and answer 404.
 */
export function newRouter<S = unknown>(opts: Pick<RouterOptions, 'prefix'> = {}): Router<S> {
  return new Router<S>({ ...opts, sensitive: true, strict: false })
}
