// The example project of `voxgate init`. Each file is a String.raw literal (no backticks or ${ inside them).
// The project uses Node's standard library only, so `npm install` needs no network.

/** The example project's source files (path -> text), besides package.json, README and .env. */
export const SOURCE_FILES: Record<string, string> = {
  'server.js': String.raw`// A voxgate agent backend: voxgate POSTs each event of a call to /api/agent, signed with the agent's webhook
// secret, and speaks what this server answers (Server-Sent Events). Node's standard library only.
import { createServer } from 'node:http'
import { pathToFileURL } from 'node:url'
import { loadEnv } from './env.js'
import { verifySignature } from './signature.js'
import { replyTo } from './agent.js'

/** Webhook bodies are small JSON objects; anything bigger is refused. */
const MAX_BODY_BYTES = 1024 * 1024

/** The HTTP server: POST /api/agent (signed), GET / (a liveness check). */
export function createAgentServer({ secret, path = '/api/agent', log = console.log }) {
  return createServer((req, res) => {
    const url = new URL(req.url || '/', 'http://localhost')
    if (req.method === 'GET' && url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('voxgate agent backend: POST ' + path + '\n')
      return
    }
    if (url.pathname !== path) return sendJson(res, 404, { error: 'not found' })
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'use POST' })
    const chunks = []
    let size = 0
    let tooBig = false
    req.on('data', (chunk) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) tooBig = true
      else chunks.push(chunk)
    })
    req.on('end', () => {
      if (tooBig) return sendJson(res, 413, { error: 'body too large' })
      const raw = Buffer.concat(chunks).toString('utf8')
      const check = verifySignature(raw, req.headers['service-signature'], secret)
      if (!check.ok) {
        log('refused an unsigned or badly signed request: ' + check.reason)
        return sendJson(res, 401, { error: 'invalid signature: ' + check.reason })
      }
      let event
      try {
        event = JSON.parse(raw)
      } catch {
        return sendJson(res, 400, { error: 'body is not JSON' })
      }
      log('<- ' + event.type + (event.text ? ': ' + event.text : ''))
      const reply = replyTo(event)
      if (reply.kind === 'json') return sendJson(res, 200, reply.body)
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      for (const e of reply.events) {
        if (e.type === 'response.tts') log('-> ' + e.content)
        res.write('data: ' + JSON.stringify(e) + '\n\n')
      }
      res.end()
    })
  })
}

function sendJson(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

// npm start: configuration from the environment and .env (VOXGATE_WEBHOOK_SECRET, PORT).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = loadEnv(new URL('./.env', import.meta.url))
  const secret = env.VOXGATE_WEBHOOK_SECRET
  if (!secret) {
    console.error('VOXGATE_WEBHOOK_SECRET is not set (see .env)')
    process.exit(1)
  }
  const port = Number(env.PORT || 3000)
  createAgentServer({ secret }).listen(port, () => {
    console.log('agent backend on http://localhost:' + port + '/api/agent (agent ' + (env.VOXGATE_AGENT_ID || '?') + ')')
    console.log('next: npx voxgate tunnel in this folder, then call your agent')
  })
}
`,
  'agent.js': String.raw`// What the agent says. Replace the echo with your own logic (an LLM call, tools, a database): each reply is a
// list of events voxgate streams to the caller; every event carries the request's turn_id.

/** The reply to one webhook event: { kind: 'sse', events } or { kind: 'json', body }. */
export function replyTo(event) {
  const turn_id = event.turn_id
  switch (event.type) {
    case 'session.start':
      return say(turn_id, 'Hello! This is your voxgate agent. Say something and I will repeat it.')
    case 'message':
      return say(turn_id, 'You said: ' + (event.text || 'nothing') + '.')
    case 'data':
      // A data event is answered with plain JSON; response.data content reaches the browser client.
      return { kind: 'json', body: { type: 'response.data', content: { received: event.data ?? null }, turn_id } }
    default:
      // Lifecycle events (session.end, session.update) need only an acknowledgement.
      return { kind: 'json', body: {} }
  }
}

function say(turn_id, text) {
  return {
    kind: 'sse',
    events: [
      { type: 'response.tts', content: text, turn_id },
      { type: 'response.end', turn_id },
    ],
  }
}
`,
  'signature.js': String.raw`import { createHmac, timingSafeEqual } from 'node:crypto'

/** How old a signed request may be, in seconds (the recommended five minutes). */
export const TOLERANCE_SECONDS = 300

/**
 * Checks service-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>"> with the agent's webhook
 * secret, in constant time, and refuses timestamps more than five minutes away.
 */
export function verifySignature(rawBody, header, secret, nowSeconds = Math.floor(Date.now() / 1000)) {
  if (typeof header !== 'string') return { ok: false, reason: 'missing service-signature header' }
  const m = /t=(\d+),v1=([a-fA-F0-9]+)/.exec(header)
  if (!m) return { ok: false, reason: 'malformed service-signature header' }
  const t = Number(m[1])
  if (Math.abs(nowSeconds - t) > TOLERANCE_SECONDS) return { ok: false, reason: 'timestamp outside the tolerance' }
  const expected = createHmac('sha256', secret).update(m[1] + '.' + rawBody).digest()
  const given = Buffer.from(m[2], 'hex')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'signature mismatch' }
  return { ok: true }
}

/** Signs a body as voxgate does (for tests and local experiments). */
export function sign(rawBody, secret, t = Math.floor(Date.now() / 1000)) {
  return 't=' + t + ',v1=' + createHmac('sha256', secret).update(t + '.' + rawBody).digest('hex')
}
`,
  'env.js': String.raw`import { readFileSync } from 'node:fs'

/** process.env over the NAME=value lines of a .env file (when there is one); process.env wins. */
export function loadEnv(file) {
  const out = {}
  let text = ''
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    text = ''
  }
  for (const raw of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(raw)
    if (!m || raw.trim().startsWith('#')) continue
    out[m[1]] = m[2].replace(/^(['"])(.*)\1$/, '$2')
  }
  return { ...out, ...process.env }
}
`,
  'test/server.test.js': String.raw`import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createAgentServer } from '../server.js'
import { sign } from '../signature.js'

const secret = 'whsec_test_secret'

async function withServer(fn) {
  const server = createAgentServer({ secret, log: () => undefined })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = 'http://127.0.0.1:' + server.address().port + '/api/agent'
  try {
    await fn(url)
  } finally {
    server.close()
  }
}

function events(text) {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => JSON.parse(block.slice('data: '.length)))
}

test('a signed message gets an SSE echo for its turn', async () => {
  await withServer(async (url) => {
    const body = JSON.stringify({ type: 'message', text: 'hello there', turn_id: 't1', session_id: 's', conversation_id: 'c' })
    const res = await fetch(url, { method: 'POST', headers: { 'service-signature': sign(body, secret) }, body })
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type'), /text\/event-stream/)
    assert.deepEqual(events(await res.text()), [
      { type: 'response.tts', content: 'You said: hello there.', turn_id: 't1' },
      { type: 'response.end', turn_id: 't1' },
    ])
  })
})

test('session.start is answered with a welcome', async () => {
  await withServer(async (url) => {
    const body = JSON.stringify({ type: 'session.start', turn_id: 'w1', session_id: 's', conversation_id: 'c' })
    const res = await fetch(url, { method: 'POST', headers: { 'service-signature': sign(body, secret) }, body })
    const got = events(await res.text())
    assert.equal(got[0].type, 'response.tts')
    assert.equal(got[0].turn_id, 'w1')
    assert.equal(got.at(-1).type, 'response.end')
  })
})

test('unsigned, wrongly signed and stale requests are refused with 401', async () => {
  await withServer(async (url) => {
    const body = JSON.stringify({ type: 'message', text: 'x', turn_id: 't' })
    const unsigned = await fetch(url, { method: 'POST', body })
    assert.equal(unsigned.status, 401)
    const wrong = await fetch(url, { method: 'POST', headers: { 'service-signature': sign(body, 'another-secret') }, body })
    assert.equal(wrong.status, 401)
    const stale = sign(body, secret, Math.floor(Date.now() / 1000) - 3600)
    const old = await fetch(url, { method: 'POST', headers: { 'service-signature': stale }, body })
    assert.equal(old.status, 401)
  })
})
`,
}
