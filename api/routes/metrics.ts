import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import { createHash, timingSafeEqual } from 'node:crypto'
import { voxError } from '../../core/errors.js'
import type { MetricsSource } from '../../core/metrics.js'

function sameSecret(a: string, b: string): boolean {
  // Hash both sides so the comparison is constant-time whatever the lengths.
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest())
}

/** GET /metrics in the Prometheus text format; with `token` set, only for `Authorization: Bearer <token>`. */
export function metricsRouter(deps: { source: MetricsSource; token: string | undefined }): Router {
  const r = newRouter()
  r.get('/metrics', async (ctx) => {
    if (deps.token !== undefined) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'))
      if (m?.[1] === undefined || !sameSecret(m[1], deps.token)) {
        ctx.set('WWW-Authenticate', 'Bearer realm="voxgate-metrics"')
        throw voxError('metrics_unauthorized')
      }
    }
    ctx.type = deps.source.contentType
    ctx.body = await deps.source.render()
  })
  return r
}
