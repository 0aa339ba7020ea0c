import t from 'tap'
import Koa from 'koa'
import Router from '@koa/router'
import { z } from 'zod'
import { Validator } from '@seriousme/openapi-schema-validator'
import { startTestGateway } from '../helpers/gateway.js'
import { openApiPath } from '../../api/openapi/openapi-document.js'
import { authorizeSchema } from '../../api/routes/sessions.js'
import { sessionListQuery } from '../../api/routes/session-list-query.js'

const gw = await startTestGateway()
t.teardown(() => gw.close())
const doc = (await gw.request('GET', '/openapi.json', { key: null })).body

/** Every route a koa app serves, found by walking its routers' layers (HEAD goes with GET). */
function appRoutes(app: Koa): string[] {
  const routes: string[] = []
  for (const mw of app.middleware as { router?: Router }[]) {
    for (const layer of mw.router?.stack ?? []) {
      for (const method of layer.methods) if (method !== 'HEAD') routes.push(`${method} ${layer.path}`)
    }
  }
  return routes
}

/** The routes of `app` that the document has no operation for. */
function undocumented(app: Koa, document: any): string[] {
  return appRoutes(app).filter((r) => {
    const [method, path] = r.split(' ') as [string, string]
    return document.paths?.[openApiPath(path)]?.[method.toLowerCase()] === undefined
  })
}

t.test('/openapi.json is a valid OpenAPI 3.1 document', async (t) => {
  const validator = new Validator()
  const res = await validator.validate(structuredClone(doc))
  t.same(res.errors, undefined, 'no validation errors')
  t.equal(res.valid, true)
  t.equal(validator.version, '3.1')
})

t.test('every route the gateway serves is in the document', async (t) => {
  const routes = appRoutes(gw.gateway.app)
  t.ok(routes.length >= 20, `the walk finds the routers' routes (${routes.length})`)
  t.ok(routes.includes('GET /v1/agents/:agent_id/sessions/:session_id'), 'nested /v1 routers included')
  t.same(undocumented(gw.gateway.app, doc), [], 'no route without an operation')
})

t.test('the check fails for a route the document lacks', async (t) => {
  const extra = new Router()
  extra.get('/v1/agents/:agent_id/secrets', (ctx) => {
    ctx.body = {}
  })
  const app = new Koa()
  for (const mw of gw.gateway.app.middleware) app.use(mw)
  app.use(extra.routes())
  t.same(undocumented(app, doc), ['GET /v1/agents/:agent_id/secrets'])
})

t.test('request bodies are the zod schemas the routes validate with', async (t) => {
  const body = doc.paths['/v1/agents/web/authorize_session'].post.requestBody.content['application/json'].schema
  const { $schema: _, ...fromZod } = z.toJSONSchema(authorizeSchema, { io: 'input' }) as Record<string, any>
  t.same(body.properties.agent_id, fromZod.properties.agent_id, 'agent_id as zod derives it')
  t.same(body.properties.metadata, fromZod.properties.metadata)
  t.equal(body.additionalProperties, false, 'unknown fields are refused, as the route does')
  t.ok(body.properties.config.properties.plugins, 'config is the pipeline override schema, with its plugins')
  const outbound = doc.paths['/v1/agents/{agent_id}/calls/initiate_outbound'].post
  t.same(outbound.requestBody.content['application/json'].schema.required, ['from_phone_number', 'to_phone_number'])
  t.same(
    outbound.parameters.map((p: { name: string }) => p.name),
    ['agent_id'],
  )
  const stages = doc.components.schemas.LatencyBreakdown.properties.stages.items.properties.name.enum
  t.same(stages.at(-1), 'first_audio_heard', 'latency_breakdown is documented')
})

t.test('query parameters are the zod schemas the routes validate with; the session list answer is described', async (t) => {
  const list = doc.paths['/v1/sessions'].get
  t.same(
    list.parameters.map((p: { name: string }) => p.name),
    Object.keys(sessionListQuery.shape),
    "every query parameter the route accepts, in the schema's order",
  )
  t.ok(
    list.parameters.every((p: { in: string; required: boolean }) => p.in === 'query' && p.required === false),
    'all optional',
  )
  const limit = list.parameters.find((p: { name: string }) => p.name === 'limit')
  t.same([limit.schema.minimum, limit.schema.maximum, limit.schema.default], [1, 200, 50])
  t.same(
    doc.paths['/v1/stats/daily'].get.parameters.map((p: { name: string }) => p.name),
    ['days'],
  )
  const schema = doc.components.schemas.SessionList
  t.equal(list.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/SessionList')
  // A real answer has exactly the documented fields.
  await gw.request('POST', '/v1/agents/web/authorize_session', {
    body: { agent_id: (await gw.request('GET', '/v1/agents')).body.agents[0].id },
  })
  const answer = (await gw.request('GET', '/v1/sessions?status=all')).body
  t.same(Object.keys(answer).sort(), Object.keys(schema.properties).sort())
  const item = schema.properties.sessions.items
  const listed = await gw.store.db.updateTable('sessions').set({ status: 'connected', started_at: new Date() }).returning('id').execute()
  t.ok(listed.length > 0, 'a session to list')
  const row = (await gw.request('GET', '/v1/sessions')).body.sessions[0]
  t.same(Object.keys(row).sort(), Object.keys(item.properties).sort(), 'an item has exactly the documented fields')
  for (const field of item.required) t.ok(row[field] !== undefined && row[field] !== null, `${field} is always there`)
})

t.test('/docs is a reference page served from local files', async (t) => {
  const page = await fetch(`${gw.url}/docs`)
  t.equal(page.status, 200)
  const html = await page.text()
  t.notMatch(html, /https?:\/\//, 'no CDN or other remote address')
  const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string)
  t.ok(assets.includes('docs/swagger-ui-bundle.js'))
  for (const a of assets) {
    const r = await fetch(new URL(a, `${gw.url}/docs`))
    t.equal(r.status, 200, `${a} is served`)
    t.ok((await r.arrayBuffer()).byteLength > 0)
  }
  const start = await (await fetch(`${gw.url}/docs/start.js`)).text()
  t.match(start, /validatorUrl: null/, 'no validator badge (it would send the document to a remote service)')
  const missing = await fetch(`${gw.url}/docs/..%2Fpackage.json`)
  t.equal(missing.status, 404)
  t.match(await missing.json(), { error: /no file/, code: 'not_found' })
})
