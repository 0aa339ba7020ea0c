import { existsSync } from 'node:fs'
import { readFile, realpath, stat } from 'node:fs/promises'
import { dirname, extname, join, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Middleware } from 'koa'
import type { Log } from '../../core/log.js'

/** URL prefix of the compiled browser SDK and demo scripts (`client/dist`). */
export const CLIENT_PREFIX = '/client/'

/** URL prefix of the console's bundle and styles (`client/dist/console`). */
export const CONSOLE_ASSETS_PREFIX = '/console/assets/'
/** Paths that answer with the console page (it reads the path itself: `/console/device` is the device sign-in). */
const CONSOLE_PAGES = new Set(['/console', '/console/', '/console/device'])

/** Where the built demo lives, or why it cannot be served. */
export type ClientDist = { ok: true; dir: string } | { ok: false; problem: string }

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
}

// The page calls authorize_session and opens the WebSocket on whatever gateway URL is typed in, and loads its
// microphone worklet from a Blob URL; everything else is same-origin.
const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self' blob:",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self' http: https: ws: wss:",
  "img-src 'self' data:",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ')

// The console talks only to its own gateway and plays recordings it fetched (with the key) from Blob URLs; uPlot
// sizes its canvas with inline styles.
const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "media-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** The project root: the nearest ancestor holding `client/build.mjs` (sources run by tsx, or compiled in dist/). */
function findProjectRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (existsSync(join(dir, 'client', 'build.mjs'))) return dir
    const up = dirname(dir)
    if (up === dir) return undefined
    dir = up
  }
}

interface ClientBuilder {
  buildClient(): string
  clientIsBuilt(): boolean
}

/**
 * Finds `client/dist`; when it was never built (a checkout without `npm install`), builds it once with the
 * project's TypeScript. Without TypeScript (a production install) the demo answers 503 with the reason.
 */
export async function prepareClientDist(log: Log, opts: { build?: boolean; root?: string } = {}): Promise<ClientDist> {
  const root = opts.root ?? findProjectRoot()
  if (root === undefined) return { ok: false, problem: 'the demo page is not installed (client/ is missing)' }
  const builder = (await import(pathToFileURL(join(root, 'client', 'build.mjs')).href)) as ClientBuilder
  const dir = join(root, 'client', 'dist')
  if (builder.clientIsBuilt()) return { ok: true, dir: await realpath(dir) }
  if (opts.build === false) return { ok: false, problem: 'the demo page is not built: run `node client/build.mjs`' }
  const started = Date.now()
  try {
    builder.buildClient()
  } catch (e) {
    log.warn({ err: e }, 'could not build the demo page (client/dist)')
    return { ok: false, problem: 'the demo page is not built and could not be built here: run `node client/build.mjs`' }
  }
  log.info({ ms: Date.now() - started }, 'built the demo page (client/dist)')
  return { ok: true, dir: await realpath(dir) }
}

/** Maps a URL path below the prefix to a file inside `dir`, or undefined for anything that could escape it. */
function resolveInside(dir: string, urlPath: string): string | undefined {
  let rel: string
  try {
    rel = decodeURIComponent(urlPath)
  } catch {
    return undefined
  }
  if (rel.includes('\0') || rel.includes('\\')) return undefined
  const parts = rel.split('/')
  if (parts.some((p) => p === '' || p === '.' || p === '..' || p.startsWith('.'))) return undefined
  if (CONTENT_TYPES[extname(rel)] === undefined) return undefined
  return join(dir, ...parts)
}

/**
 * Serves the demo page at `/`, the compiled scripts under {@link CLIENT_PREFIX}, the operator console at `/console`
 * (and `/console/device`) with its bundle under {@link CONSOLE_ASSETS_PREFIX}: only files inside
 * `client/dist` with a known type (no `.d.ts`, no dotfiles, no traversal, symlinks must stay inside), revalidated
 * on every load (`no-cache` with an ETag) so an upgraded gateway never mixes old and new scripts.
 */
export function staticClient(opts: { log: Log; dist?: ClientDist }): Middleware {
  // Found (or built) on the first request for the page, once, so a gateway that never serves it pays nothing.
  let prepared: Promise<ClientDist> | undefined = opts.dist === undefined ? undefined : Promise.resolve(opts.dist)
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next()
    const isDemo = ctx.path === '/' || ctx.path === '/index.html'
    const isConsole = CONSOLE_PAGES.has(ctx.path)
    const isPage = isDemo || isConsole
    const isConsoleAsset = ctx.path.startsWith(CONSOLE_ASSETS_PREFIX)
    if (!isPage && !isConsoleAsset && !ctx.path.startsWith(CLIENT_PREFIX)) return next()
    prepared ??= prepareClientDist(opts.log).catch((e: unknown): ClientDist => {
      opts.log.error({ err: e }, 'demo page unavailable')
      return { ok: false, problem: 'the demo page is unavailable' }
    })
    const dist = await prepared
    if (!dist.ok) {
      ctx.status = 503
      ctx.set('Retry-After', '3600')
      ctx.body = { error: dist.problem }
      return
    }
    const file = isDemo
      ? join(dist.dir, 'index.html')
      : isConsole
        ? join(dist.dir, 'console', 'index.html')
        : isConsoleAsset
          ? resolveInside(join(dist.dir, 'console'), ctx.path.slice(CONSOLE_ASSETS_PREFIX.length))
          : resolveInside(dist.dir, ctx.path.slice(CLIENT_PREFIX.length))
    if (file === undefined) return next()
    let real: string
    let info: Awaited<ReturnType<typeof stat>>
    try {
      real = await realpath(file)
      info = await stat(real)
    } catch {
      return next()
    }
    if (!real.startsWith(dist.dir + sep) || !info.isFile()) return next()
    ctx.status = 200
    ctx.set('Cache-Control', 'no-cache')
    ctx.set('X-Content-Type-Options', 'nosniff')
    ctx.set('ETag', `W/"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`)
    ctx.lastModified = info.mtime
    if (isPage) {
      ctx.set('Content-Security-Policy', isConsole ? CONSOLE_CSP : PAGE_CSP)
      ctx.set('Referrer-Policy', 'no-referrer')
    }
    if (ctx.fresh) {
      ctx.status = 304
      return
    }
    ctx.type = isPage ? 'text/html; charset=utf-8' : (CONTENT_TYPES[extname(real)] as string)
    ctx.body = ctx.method === 'HEAD' ? '' : await readFile(real)
    if (ctx.method === 'HEAD') ctx.length = info.size
  }
}
