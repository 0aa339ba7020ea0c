import t from 'tap'
import { startTestGateway } from '../helpers/gateway.js'

// Request bodies nest at most 32 levels (the body object is level 1), checked on the text before anything
// recursive runs: deeper bodies are a 400 with the SPEC's error body, never a 500, and nothing of them is stored.
const gw = await startTestGateway()
t.teardown(() => gw.close())
const agent = (await gw.request('POST', '/v1/agents', { body: {} })).body

/** `{"a":{"a":...{}}}`, `depth` levels. */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`
}
/** An authorize_session body whose metadata is `depth` levels deep (the body one more). */
const withMetadata = (depth: number) => `{"agent_id":"${agent.id}","metadata":${nested(depth)}}`
const authorize = (rawBody: string) =>
  gw.request('POST', '/v1/agents/web/authorize_session', { rawBody, headers: { 'content-type': 'application/json' } })

t.test('32 levels are accepted, 33 are a 400 naming the limit', async (t) => {
  const ok = await authorize(withMetadata(31))
  t.equal(ok.status, 200, 'a body 32 levels deep passes')
  const deep = await authorize(withMetadata(32))
  t.equal(deep.status, 400, 'a body 33 levels deep is refused')
  t.equal(deep.body.code, 'json_too_deep')
  t.match(deep.body.error, /deeper than 32 levels/)
})

t.test('20,000 levels: 400, not 500', async (t) => {
  const r = await authorize(withMetadata(20_000))
  t.equal(r.status, 400)
  t.equal(r.body.code, 'json_too_deep')
  const arrays = await gw.request('POST', '/v1/agents', {
    rawBody: `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
    headers: { 'content-type': 'application/json' },
  })
  t.equal(arrays.status, 400, 'on any JSON route')
  t.equal(arrays.body.code, 'json_too_deep')
})

t.test('1,000-deep metadata is refused and not stored', async (t) => {
  const before = await gw.store.db.selectFrom('sessions').select('id').execute()
  const r = await authorize(withMetadata(1000))
  t.equal(r.status, 400)
  t.equal(r.body.code, 'json_too_deep')
  const after = await gw.store.db.selectFrom('sessions').select('id').execute()
  t.equal(after.length, before.length, 'no session stored')
})

t.test('an agent config override nested too deeply is refused the same way', async (t) => {
  const r = await gw.request('POST', `/v1/agents/${agent.id}`, {
    rawBody: `{"config":{"clients":{},"plugins":[],"metadata":${nested(40)}}}`,
    headers: { 'content-type': 'application/json' },
  })
  t.equal(r.status, 400)
  t.equal(r.body.code, 'json_too_deep')
})
