// Start-up time of `voxgate serve` as a user gets it: time from spawning `node bin/voxgate.js serve` to the first 200
// from /readyz (polled every 10 ms), median of `repeats` runs of each kind:
//   cold  a fresh DATA_DIR (the first start of a new install: database made from the template, migrated, seeded)
//   warm  the same DATA_DIR again (a restart)
//   server cold / warm  with DATABASE_URL (set it to include these rows): a new database, then the same again
// Then, on each run, how late the first reply's audio is: right after /readyz a browser-channel session of an agent
// made from the default template (scripted agent, offline espeak-ng TTS) is opened over a plain WebSocket, and the
// time from the welcome's first text message to its first `response.audio` is taken.
// `node bin/build.js` runs first (dist/ and the PGlite template, as `npm install` leaves them); `npm start` adds
// npm's own start-up (~0.3 s) on top of these figures.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import WebSocket from 'ws'
import type { BenchFn, BenchRow } from './bench-util.js'
import { GATEWAY_NODE_OPTIONS } from '../server/gc-tuning.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * CPU time (user + system) a process has used so far, ms, from /proc (Linux; NaN elsewhere). Reported beside the
 * wall time because other work on a small machine stretches wall time; this much stays the gateway's own.
 */
function cpuMsOf(pid: number | undefined): number {
  try {
    // Fields after the command name: state is 3rd, utime and stime the 14th and 15th (clock ticks, 100 per second).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return Number.NaN
  }
}

interface Started {
  proc: ChildProcess
  url: string
  /** Spawn to first 200 from /readyz, ms. */
  readyMs: number
  /** CPU time the gateway used until then, ms. */
  cpuMs: number
  /** The default organization's key, printed by a first start. */
  apiKey: string | undefined
}

async function startGateway(env: Record<string, string>): Promise<Started> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const { DATABASE_URL: _ignored, ...inherited } = process.env
  const t0 = performance.now()
  const proc = spawn(process.execPath, [...GATEWAY_NODE_OPTIONS, join(root, 'bin', 'voxgate.js'), 'serve'], {
    cwd: root,
    env: { ...inherited, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  proc.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString()
  })
  let exited = false
  proc.once('exit', () => {
    exited = true
  })
  for (;;) {
    if (exited) throw new Error(`gateway exited before it was ready:\n${out}`)
    if (performance.now() - t0 > 120_000) throw new Error('gateway not ready after 120 s')
    try {
      const res = await fetch(`${url}/readyz`)
      await res.arrayBuffer()
      if (res.status === 200) break
    } catch {
      // not listening yet
    }
    await sleep(10)
  }
  const readyMs = performance.now() - t0
  return { proc, url, readyMs, cpuMs: cpuMsOf(proc.pid), apiKey: /API key:\s+(\S+)/.exec(out)?.[1] }
}

async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return
  await new Promise<void>((resolve) => {
    proc.once('exit', () => resolve())
    proc.kill('SIGTERM')
  })
}

async function api(url: string, key: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const json = await res.json()
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}

/** Opens a browser session of a default-template agent; ms from the welcome's first text to its first audio. */
async function firstAudioAfterText(url: string, key: string): Promise<number> {
  const agent = await api(url, key, '/v1/agents', {})
  const auth = await api(url, key, '/v1/agents/web/authorize_session', { agent_id: agent.agent_id ?? agent.id })
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/agents/web/websocket?client_session_key=${auth.client_session_key}`)
  try {
    return await new Promise<number>((resolve, reject) => {
      let textAt: number | undefined
      const timer = setTimeout(() => reject(new Error('no welcome audio within 30 s')), 30_000)
      ws.on('message', (data) => {
        const message = JSON.parse(String(data)) as { type: string }
        const now = performance.now()
        if (textAt === undefined && message.type.startsWith('response.text')) textAt = now
        if (message.type === 'response.audio') {
          clearTimeout(timer)
          // Audio before any text counts as on time.
          resolve(textAt === undefined ? 0 : now - textAt)
        }
      })
      // As the SDK does: the gateway holds output until client.ready (at most 3 s), which would time the hold.
      ws.once('open', () => ws.send(JSON.stringify({ type: 'client.ready' })))
      ws.once('error', reject)
      ws.once('close', () => reject(new Error('socket closed before the welcome audio')))
    })
  } finally {
    ws.removeAllListeners('close')
    ws.close()
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? Number.NaN
}

function row(kind: string, ready: number[], cpu: number[], audio: number[]): BenchRow {
  return {
    start: kind,
    'ready median ms': Math.round(median(ready)),
    'ready min-max ms': `${Math.round(Math.min(...ready))}-${Math.round(Math.max(...ready))}`,
    'CPU until ready median ms': Math.round(median(cpu)),
    'first audio after text median ms': Math.round(median(audio)),
    'first audio max ms': Math.round(Math.max(...audio)),
    runs: ready.length,
  }
}

interface Mode {
  name: string
  /** Environment of the cold start of run `i`, and a cleanup for after its warm start. */
  prepare(i: number): Promise<{ env: Record<string, string>; cleanup(): Promise<void> }>
}

function embedded(): Mode {
  return {
    name: '',
    async prepare() {
      const dataDir = mkdtempSync(join(tmpdir(), 'voxgate-startup-'))
      return { env: { DATA_DIR: dataDir }, cleanup: async () => rmSync(dataDir, { recursive: true, force: true }) }
    },
  }
}

function server(serverUrl: string): Mode {
  const admin = async (query: string) => {
    const client = new pg.Client({ connectionString: serverUrl })
    await client.connect()
    try {
      await client.query(query)
    } finally {
      await client.end()
    }
  }
  return {
    name: 'server ',
    async prepare(i) {
      const name = `voxgate_startup_${process.pid}_${i}`
      await admin(`drop database if exists ${name} with (force)`)
      await admin(`create database ${name}`)
      const url = new URL(serverUrl)
      url.pathname = `/${name}`
      return { env: { DATABASE_URL: url.toString() }, cleanup: () => admin(`drop database if exists ${name} with (force)`) }
    },
  }
}

export const bench: BenchFn = async ({ repeats }) => {
  const built = spawnSync(process.execPath, [join(root, 'bin', 'build.js')], { cwd: root, encoding: 'utf8' })
  if (built.status !== 0) throw new Error(`bin/build.js failed:\n${built.stdout}${built.stderr}`)
  const modes = [embedded()]
  if (process.env.DATABASE_URL) modes.push(server(process.env.DATABASE_URL))
  const rows: BenchRow[] = []
  for (const mode of modes) {
    const ready = { cold: [] as number[], warm: [] as number[] }
    const cpu = { cold: [] as number[], warm: [] as number[] }
    const audio = { cold: [] as number[], warm: [] as number[] }
    for (let i = 0; i < repeats; i++) {
      const { env, cleanup } = await mode.prepare(i)
      try {
        const cold = await startGateway(env)
        ready.cold.push(cold.readyMs)
        cpu.cold.push(cold.cpuMs)
        const key = cold.apiKey
        if (key === undefined) throw new Error('a first start printed no API key')
        try {
          audio.cold.push(await firstAudioAfterText(cold.url, key))
        } finally {
          await stop(cold.proc)
        }
        const warm = await startGateway(env)
        ready.warm.push(warm.readyMs)
        cpu.warm.push(warm.cpuMs)
        try {
          audio.warm.push(await firstAudioAfterText(warm.url, key))
        } finally {
          await stop(warm.proc)
        }
      } finally {
        await cleanup()
      }
    }
    rows.push(row(`${mode.name}cold`, ready.cold, cpu.cold, audio.cold), row(`${mode.name}warm`, ready.warm, cpu.warm, audio.warm))
  }
  return rows
}
