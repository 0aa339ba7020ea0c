import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import { voxError } from '../../core/errors.js'
import type { MetricsSource } from '../../core/metrics.js'
import { bearer, sameSecret } from '../auth.js'

/** GET /metrics in the Prometheus text format; with `token` set, only for `Authorization: Bearer <token>`. */
export function metricsRouter(deps: { source: MetricsSource; token: string | undefined }): Router {
  const r = newRouter()
  r.get('/metrics', async (ctx) => {
    if (deps.token !== undefined) {
      const token = bearer(ctx.get('authorization'))
      if (token === undefined || !sameSecret(token, deps.token)) {
        ctx.set('WWW-Authenticate', 'Bearer realm="voxgate-metrics"')
        throw voxError('metrics_unauthorized')
      }
    }
    ctx.type = deps.source.contentType
    ctx.body = await deps.source.render()
  })
  return r
}
