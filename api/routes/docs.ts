import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { voxError } from '../../core/errors.js'

/** The files of the reference page: Swagger UI's bundle from the installed package (no CDN), and our start-up. */
const SWAGGER_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
}

/**
 * Starts Swagger UI on the document; a file rather than an inline script, so a strict CSP can allow it. No
 * validator badge: it would send the document to a remote service.
 */
const START_SCRIPT = `window.addEventListener('load', () => {
  window.ui = SwaggerUIBundle({ url: 'openapi.json', dom_id: '#reference', deepLinking: true, tryItOutEnabled: false, validatorUrl: null })
})
`

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>voxgate API reference</title>
  <link rel="icon" type="image/png" href="docs/favicon-32x32.png">
  <link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
  <div id="reference"></div>
  <script src="docs/swagger-ui-bundle.js"></script>
  <script src="docs/start.js"></script>
</body>
</html>
`

/** Where swagger-ui-dist is installed. */
function swaggerDir(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
}

/**
 * `GET /openapi.json` (`document`, the wiring builds it from the routes' zod schemas: api/openapi/) and
 * `GET /docs` (a reference page rendering it with the locally installed Swagger UI).
 */
export function docsRouter(deps: { document: Record<string, unknown> }): Router {
  const r = newRouter()
  const document = JSON.stringify(deps.document)
  const files = new Map<string, Buffer>()
  r.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json'
    ctx.body = document
  })
  r.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8'
    ctx.body = PAGE
  })
  r.get('/docs/:file', async (ctx) => {
    const name = ctx.params.file ?? ''
    if (name === 'start.js') {
      ctx.type = 'text/javascript; charset=utf-8'
      ctx.body = START_SCRIPT
      return
    }
    const type = SWAGGER_FILES[name]
    if (type === undefined) throw voxError('not_found', `no file ${name.slice(0, 64)} in the API reference`)
    let body = files.get(name)
    if (body === undefined) {
      body = await readFile(join(swaggerDir(), name))
      files.set(name, body)
    }
    ctx.type = type
    ctx.set('Cache-Control', 'public, max-age=3600')
    ctx.body = body
  })
  return r
}
