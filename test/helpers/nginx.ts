/**
 * nginx (the Debian package) as a round-robin load balancer in front of gateway replicas: its own config in a
 * temporary folder, on a port of its own, as a child process in the foreground (`daemon off`). Its proxy settings
 * are the deploy recipe of docs/guides/replicas.md: a replica that drains answers 503 and nginx tries the next one.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Where the Debian package puts it. */
export const NGINX_BIN = '/usr/sbin/nginx'

/** True when nginx is installed here. */
export function hasNginx(): boolean {
  return existsSync(NGINX_BIN)
}

/** A port free a moment ago. */
export async function freePort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  const port = (srv.address() as { port: number }).port
  await new Promise((r) => srv.close(r))
  return port
}

/**
 * How long nginx leaves out an upstream after a failed attempt (an error, or a 503 it retried elsewhere). A
 * rolling restart waits this long after a replacement is ready before draining the next replica, so nginx has
 * tried the replacement again by then.
 */
export const UPSTREAM_FAIL_TIMEOUT_MS = 1_000

/** One request as nginx logged it. */
export interface AccessLogLine {
  /** When nginx received the request (ms since the epoch; $msec less $request_time). */
  startedAt: number
  /** When the request ended and was logged (ms since the epoch): a WebSocket's when it closed. */
  endedAt: number
  method: string
  uri: string
  /** The upstream whose answer the client got (the last one tried). */
  upstream: string
  /** The status the client got. */
  status: number
  /** Every upstream tried, in order: more than one when nginx passed the request on (a 503, a refused connection). */
  tried: string[]
  /** The status each tried upstream answered: 502 where nginx could not connect (a refused connection), 0 where it logged none. */
  upstreamStatuses: number[]
}

/** A running balancer. */
export interface Balancer {
  url: string
  proc: ChildProcess
  /** Requests answered so far (a line is written when the request ends; a WebSocket's when it closes). */
  accessLog(): AccessLogLine[]
  /** nginx's error log so far (level warn and above: an upstream it took out, a refused connection). */
  errorLog(): string
  close(): Promise<void>
}

/**
 * Starts nginx on `port`, round-robin over `upstreams` (`host:port`), WebSocket upgrades passed through. A 503 or
 * a failed connection is passed to the next upstream; a POST that reached an upstream is passed on only on the
 * carrier's webhook paths, which are safe to repeat.
 */
export async function startNginx(port: number, upstreams: string[]): Promise<Balancer> {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-nginx-'))
  for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
    mkdirSync(join(dir, d))
    // Workers run as an unprivileged user when nginx starts as root.
    chmodSync(join(dir, d), 0o777)
  }
  chmodSync(dir, 0o755)
  const conf = `
daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  log_format voxgate '$msec|$request_method|$uri|$upstream_addr|$status|$upstream_status|$request_time';
  access_log ${dir}/access.log voxgate;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  map $http_upgrade $connection_upgrade { default upgrade; '' close; }
  upstream voxgate { ${upstreams.map((u) => `server ${u} max_fails=1 fail_timeout=${UPSTREAM_FAIL_TIMEOUT_MS / 1000}s;`).join(' ')} }
  server {
    listen 127.0.0.1:${port};
    proxy_http_version 1.1;
    proxy_set_header Upgrade $http_upgrade;
    proxy_set_header Connection $connection_upgrade;
    proxy_set_header Host $host;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    proxy_set_header X-Forwarded-Proto $scheme;
    proxy_buffering off;
    proxy_read_timeout 3600s;
    proxy_connect_timeout 2s;
    location / {
      proxy_pass http://voxgate;
      proxy_next_upstream error timeout http_503;
    }
    location /v1/agents/carrier/ {
      proxy_pass http://voxgate;
      proxy_next_upstream error timeout http_503 non_idempotent;
    }
  }
}
`
  writeFileSync(join(dir, 'nginx.conf'), conf)
  const proc = spawn(NGINX_BIN, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { stdio: 'ignore' })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 20_000
  for (;;) {
    if (proc.exitCode !== null) {
      const log = existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : ''
      throw new Error(`nginx exited: ${log.slice(0, 1000)}`)
    }
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    )
    if (ok) break
    if (Date.now() > deadline) throw new Error('nginx did not start')
    await new Promise((r) => setTimeout(r, 50))
  }
  return {
    url,
    proc,
    accessLog() {
      const file = join(dir, 'access.log')
      if (!existsSync(file)) return []
      return readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => {
          const [msec = '0', method = '', uri = '', upstreams = '', status = '0', upstreamStatus = '', requestTime = '0'] = l.split('|')
          // Several upstreams are listed as "a, b" (and "a : b" across an internal redirect).
          const tried = upstreams.split(/\s*[,:]\s+/).filter((u) => u !== '')
          const upstreamStatuses = upstreamStatus.split(/\s*[,:]\s+/).map((s) => (s === '-' ? 0 : Number(s)))
          const endedAt = Math.round(Number(msec) * 1000)
          const startedAt = endedAt - Math.round(Number(requestTime) * 1000)
          return { startedAt, endedAt, method, uri, upstream: tried.at(-1) ?? '', status: Number(status), tried, upstreamStatuses }
        })
    },
    errorLog() {
      const file = join(dir, 'error.log')
      return existsSync(file) ? readFileSync(file, 'utf8') : ''
    },
    async close() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r))
        proc.kill('SIGQUIT')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
