import { readFileSync } from 'node:fs'
import t from 'tap'
import { REST_API_PAGE, restApiPage, typeText } from '../helpers/docs/rest-api-page.js'

// docs/reference/rest-api.md is generated from the OpenAPI document the gateway serves; a route or a body field
// changed without `npm run docs:rest-api` fails here.

t.test('the committed REST API page is what the generator writes', async (t) => {
  const committed = readFileSync(REST_API_PAGE, 'utf8')
  const generated = restApiPage()
  const differs = committed.split('\n').findIndex((line, i) => line !== generated.split('\n')[i])
  t.ok(committed === generated, `docs/reference/rest-api.md is stale (first difference at line ${differs + 1}): run npm run docs:rest-api`)
})

t.test('types read as a person writes them', async (t) => {
  t.equal(typeText({ type: 'integer', minimum: 1, maximum: 100 }), 'integer, 1 to 100')
  t.equal(typeText({ enum: ['a', 'b'] }), '"a", "b"')
  t.equal(typeText({ type: 'array', items: { type: 'string' } }), 'array of string')
  t.equal(typeText({ anyOf: [{ type: 'string' }, { type: 'null' }] }), 'string or null')
})
