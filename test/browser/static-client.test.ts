import t from 'tap'
import { request } from 'node:http'
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Koa from 'koa'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startTestGateway } from '../helpers/gateway.js'
import { silentLogger } from '../../core/log.js'
import { prepareClientDist, staticClient, type ClientDist } from '../../transports/http/static-client.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const gw = await startTestGateway()
t.teardown(() => gw.close())

/** A raw GET, so paths like `/client/../x` reach the server unnormalized. */
function rawGet(base: string, path: string, headers: Record<string, string> = {}, method = 'GET') {
  const u = new URL(base)
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method, headers }, (res) => {
      let body = ''
      res.on('data', (c: Buffer) => (body += c.toString()))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('GET / is the demo page, its scripts load from /client/', async (t) => {
  const page = await rawGet(gw.url, '/')
  t.equal(page.status, 200)
  t.match(page.headers['content-type'], /^text\/html; charset=utf-8/)
  t.match(page.body, /voxgate voice agent demo/)
  t.match(page.body, /src="client\/demo\/demo\.js"/)
  t.equal(page.headers['cache-control'], 'no-cache')
  t.match(page.headers['content-security-policy'], /script-src 'self' blob:/)
  t.equal(page.headers['x-content-type-options'], 'nosniff')
  const demo = await rawGet(gw.url, '/client/demo/demo.js')
  t.equal(demo.status, 200)
  t.match(demo.headers['content-type'], /^text\/javascript; charset=utf-8/)
  t.match(demo.body, /from '\.\.\/src\/voxgate-client\.js'/, 'relative imports resolve under /client/')
  const sdk = await rawGet(gw.url, '/client/src/voxgate-client.js')
  t.equal(sdk.status, 200)
  const map = await rawGet(gw.url, '/client/src/voxgate-client.js.map')
  t.equal(map.status, 200)
  t.match(map.headers['content-type'], /^application\/json/)
})

t.test('revalidation with the ETag answers 304; HEAD has no body', async (t) => {
  const first = await rawGet(gw.url, '/client/src/pcm16.js')
  const etag = String(first.headers.etag)
  t.match(etag, /^W\/"/)
  const again = await rawGet(gw.url, '/client/src/pcm16.js', { 'if-none-match': etag })
  t.equal(again.status, 304)
  t.equal(again.body, '')
  const head = await rawGet(gw.url, '/client/src/pcm16.js', {}, 'HEAD')
  t.equal(head.status, 200)
  t.equal(head.body, '')
  t.equal(Number(head.headers['content-length']), Buffer.byteLength(first.body))
})

t.test('only files inside client/dist with a known type; no traversal', async (t) => {
  for (const path of [
    '/client/../package.json',
    '/client/%2e%2e/package.json',
    '/client/src/%2e%2e/%2e%2e/build.mjs',
    '/client/src/..%2f..%2fbuild.mjs',
    '/client/%2e%2e%5cpackage.json',
    '/client/src/voxgate-client.d.ts',
    '/client/index.html',
    '/client/src/',
    '/client/src/nope.js',
    '/client/src/pcm16.js%00.js',
    '/client/.hidden.js',
    '/client/src//pcm16.js',
  ]) {
    const r = await rawGet(gw.url, path)
    t.equal(r.status, 404, path)
    t.notMatch(r.body, /"name": "voxgate"|buildClient/, `${path}: nothing leaked`)
  }
  const post = await rawGet(gw.url, '/', {}, 'POST')
  t.equal(post.status, 404, 'only GET and HEAD')
})

t.test('the API is unaffected', async (t) => {
  t.equal((await gw.request('GET', '/healthz')).status, 200)
  t.equal((await gw.request('GET', '/v1/agents')).status, 200)
})

async function serve(dist: ClientDist) {
  const app = new Koa()
  app.use(staticClient({ log: silentLogger(), dist }))
  const server = createServer(app.callback())
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) }
}

t.test('without a build and without TypeScript: 503 with the reason', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'voxgate-client-'))
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }))
  cpSync(join(root, 'client'), join(tmp, 'client'), { recursive: true, filter: (src) => !src.includes(`${'client'}/dist`) })
  const dist = await prepareClientDist(silentLogger(), { root: tmp })
  t.equal(dist.ok, false, 'no typescript next to this copy')
  const s = await serve(dist)
  t.teardown(s.close)
  const r = await rawGet(s.url, '/')
  t.equal(r.status, 503)
  t.match(JSON.parse(r.body).error, /demo page is not built.*node client\/build\.mjs/)
  t.equal((await rawGet(s.url, '/client/demo/demo.js')).status, 503)
})

t.test('without a build but with TypeScript: built once, then served', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'voxgate-client-'))
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }))
  cpSync(join(root, 'client'), join(tmp, 'client'), { recursive: true, filter: (src) => !src.includes(`${'client'}/dist`) })
  // The console bundles the gateway's end-reason list, as a checkout has it beside client/.
  for (const f of ['end-reason.ts', 'call-status.ts']) cpSync(join(root, 'core', f), join(tmp, 'core', f))
  symlinkSync(join(root, 'node_modules'), join(tmp, 'node_modules'), 'dir')
  t.notOk(existsSync(join(tmp, 'client', 'dist')))
  const dist = await prepareClientDist(silentLogger(), { root: tmp })
  t.equal(dist.ok, true)
  t.ok(existsSync(join(tmp, 'client', 'dist', 'demo', 'demo.js')))
  const s = await serve(dist)
  t.teardown(s.close)
  t.equal((await rawGet(s.url, '/')).status, 200)
  t.equal((await rawGet(s.url, '/client/src/voxgate-client.js')).status, 200)
})
