// What `voxgate tunnel` adds to a webhook turn: the time from sending a signed webhook request to receiving the
// first SSE event, straight to a local server and through the tunnel (the CLI a separate process, as in use),
// on loopback. Two tunnel paths: the request landing on the replica that holds the tunnel's WebSocket, and on
// another replica (relayed through the store's notification channel: in-process with PGlite, Postgres NOTIFY
// with DATABASE_URL). Requests alternate between the paths so machine noise falls on all of them.
// Target: added latency to the first SSE event, p99 under 5 ms.
import { Agent, createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { BenchFn, BenchRow } from './bench-util.js'
import { startTestGateway } from '../test/helpers/gateway.js'
import { spawnCli } from '../test/helpers/run-cli.js'
import { freePort } from '../test/helpers/nginx.js'
import { signWebhook } from '../pipeline/agent/signature.js'

const SAMPLES = 1_000
const WARMUP = 40

/** ms from request start to the first body chunk (the first SSE event). */
function firstEventMs(url: URL, agent: Agent, body: string, secret: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'service-signature': signWebhook(secret, body) } },
      (res) => {
        let first: number | undefined
        res.on('data', () => {
          first ??= performance.now() - t0
        })
        res.on('end', () => (first === undefined ? reject(new Error(`no body (HTTP ${res.statusCode})`)) : resolve(first)))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN
}

export const bench: BenchFn = async () => {
  // The local server: writes the first SSE event as soon as the request body is in, the end a little later.
  const local = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('data: {"type":"response.tts","content":"Hello.","turn_id":"t"}\n\n')
      setTimeout(() => res.end('data: {"type":"response.end","turn_id":"t"}\n\n'), 2)
    })
  })
  await new Promise<void>((r) => local.listen(0, '127.0.0.1', r))
  const localPort = (local.address() as AddressInfo).port

  const port = await freePort()
  const a = await startTestGateway({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` })
  const b = await startTestGateway({ PORT: '0', PUBLIC_URL: `http://127.0.0.1:${port}` }, { db: a.db })
  const agent = (await a.request('POST', '/v1/agents', { body: { name: 'bench' } })).body
  const cli = spawnCli(['tunnel', '--agent-id', agent.id, '--port', String(localPort), '--path', '/hook'], {
    env: { VOXGATE_GATEWAY: a.url, VOXGATE_API_KEY: a.apiKey },
  })
  const rows: BenchRow[] = []
  try {
    const tunnelUrl = new URL((await cli.waitFor(/webhook URL: (\S+)/))[1] as string)
    const paths = {
      direct: new URL(`http://127.0.0.1:${localPort}/hook`),
      'tunnel, holding replica': new URL(`${a.url}${tunnelUrl.pathname}`),
      'tunnel, other replica': new URL(`${b.url}${tunnelUrl.pathname}`),
    }
    const http = new Agent({ keepAlive: true, maxSockets: 1 })
    const times = new Map<string, number[]>(Object.keys(paths).map((k) => [k, []]))
    const body = JSON.stringify({
      type: 'message',
      text: 'what are your opening hours',
      turn_id: 't',
      session_id: 's',
      conversation_id: 'c',
    })
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      for (const [name, url] of Object.entries(paths)) {
        const ms = await firstEventMs(url, http, body, agent.webhook_secret)
        if (i >= WARMUP) times.get(name)!.push(ms)
      }
    }
    http.destroy()
    const direct = times.get('direct')!
    for (const [name, xs] of times) {
      const added = name === 'direct' ? undefined : pct(xs, 99) - pct(direct, 99)
      rows.push({
        path: name,
        database: a.db.options.databaseUrl === undefined ? 'PGlite' : 'Postgres',
        samples: xs.length,
        'p50 ms': Number(pct(xs, 50).toFixed(2)),
        'p95 ms': Number(pct(xs, 95).toFixed(2)),
        'p99 ms': Number(pct(xs, 99).toFixed(2)),
        'added p50 ms': name === 'direct' ? '' : Number((pct(xs, 50) - pct(direct, 50)).toFixed(2)),
        'added p95 ms': name === 'direct' ? '' : Number((pct(xs, 95) - pct(direct, 95)).toFixed(2)),
        'added p99 ms': added === undefined ? '' : Number(added.toFixed(2)),
        'target added p99 < 5 ms': added === undefined ? '' : added < 5 ? 'met' : 'MISSED',
      })
    }
  } finally {
    cli.proc.kill('SIGINT')
    await cli.exited
    await b.close()
    await a.close()
    local.close()
  }
  return rows
}
