import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import type { Kysely } from 'kysely'
import type { Database } from '../../gateway/store/schema.js'
import { voxError } from '../../core/errors.js'
import { revokeApiKey } from '../../gateway/store/api-keys.js'
import { getOrganizationRow } from '../../gateway/store/organizations.js'
import type { ApiState } from '../auth.js'

/** Who a key is and how it signs itself out (additions for `voxgate login` / `logout` and the console). */
export function accountRouter(deps: { db: Kysely<Database> }): Router<ApiState> {
  const { db } = deps
  const r = newRouter<ApiState>()

  r.get('/v1/whoami', async (ctx) => {
    const row = await getOrganizationRow(db, ctx.state.organizationId)
    if (row === undefined) throw voxError('organization_not_found')
    ctx.body = { organization_id: row.id, organization_name: row.name, key_id: ctx.state.keyId }
  })

  r.delete('/v1/api_keys/current', async (ctx) => {
    const keyId = ctx.state.keyId
    if (keyId === null) throw voxError('bad_request', 'the admin token is not an API key: there is nothing to revoke')
    await revokeApiKey(db, ctx.state.organizationId, keyId)
    ctx.status = 204
  })

  return r
}
