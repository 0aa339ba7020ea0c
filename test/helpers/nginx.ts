/**
 * nginx (the Debian package) as a round-robin load balancer in front of gateway replicas: its own config in a
 * temporary folder, on a port of its own, as a child process in the foreground (`daemon off`).
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

/** A running balancer. */
export interface Balancer {
  url: string
  proc: ChildProcess
  /** Requests answered so far (a line is written when the request ends; a WebSocket's when it closes). */
  accessLog(): { method: string; uri: string; upstream: string; status: number }[]
  close(): Promise<void>
}

/** Starts nginx on `port`, round-robin over `upstreams` (`host:port`), WebSocket upgrades passed through. */
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
  log_format voxgate '$request_method $uri $upstream_addr $status';
  access_log ${dir}/access.log voxgate;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  map $http_upgrade $connection_upgrade { default upgrade; '' close; }
  upstream voxgate { ${upstreams.map((u) => `server ${u};`).join(' ')} }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://voxgate;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_buffering off;
      proxy_read_timeout 3600s;
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
          const [method = '', uri = '', upstream = '', status = '0'] = l.split(' ')
          return { method, uri, upstream, status: Number(status) }
        })
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
