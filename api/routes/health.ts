import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import type { Store } from '../../gateway/store/database.js'
import { voxError } from '../../core/errors.js'

/** /healthz: the process is up. /readyz: the database answers and the gateway takes sessions. */
export function healthRouter(deps: { store: Store; isDraining: () => boolean }): Router {
  const r = newRouter()
  r.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' }
  })
  r.get('/readyz', async (ctx) => {
    if (deps.isDraining()) throw voxError('shutting_down')
    if (!(await deps.store.ping())) throw voxError('database_unavailable')
    ctx.body = { status: 'ready', database: deps.store.dialect }
  })
  return r
}
