import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import { z } from 'zod'
import type { Kysely } from 'kysely'
import type { Database } from '../../gateway/store/schema.js'
import { listSessions } from '../../gateway/store/session-list.js'
import { dailyStats } from '../../gateway/store/daily-stats.js'
import type { ApiState } from '../auth.js'
import { parseOr400 } from '../http/validate.js'
import { encodeCursor, sessionListQuery, storeQuery } from './session-list-query.js'

/** Query of GET /v1/stats/daily. */
export const dailyStatsQuery = z.strictObject({
  days: z.coerce.number().int().min(1).max(366).default(30).describe('UTC days up to the current one, 1..366 (default 30)'),
})

/** The organization's sessions and daily figures (additions to the SPEC, for the console). */
export function sessionListRouter(deps: { db: Kysely<Database> }): Router<ApiState> {
  const { db } = deps
  const r = newRouter<ApiState>()

  r.get('/v1/sessions', async (ctx) => {
    const q = parseOr400(sessionListQuery, { ...ctx.query })
    ctx.set('Cache-Control', 'no-store')
    const page = await listSessions(db, ctx.state.organizationId, storeQuery(q))
    ctx.body = { sessions: page.sessions, next_cursor: page.next === undefined ? null : encodeCursor(page.next) }
  })

  r.get('/v1/stats/daily', async (ctx) => {
    const q = parseOr400(dailyStatsQuery, { ...ctx.query })
    ctx.body = { days: await dailyStats(db, ctx.state.organizationId, q.days) }
  })

  return r
}
