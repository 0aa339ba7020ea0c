/**
 * What a failed webhook leaves where the organization can read it (the session details) and in the gateway's log:
 * the status and a fixed reason, never the target's body, even with `debug_failures` on a private (loopback)
 * target; and a closed port reads the same as an open port that speaks no TLS (no port scanning).
 */
import t from 'tap'
import { createServer as createHttpServer } from 'node:http'
import { createServer as createTcpServer, type AddressInfo, type Server } from 'node:net'
import { Writable } from 'node:stream'
import { createLogger } from '../../core/log.js'
import { closedPort, entryFor } from '../helpers/failure-rows.js'
import { eventually } from '../helpers/eventually.js'
import { startVoiceHarness } from '../helpers/voice-harness.js'
import { openBrowserSession } from '../helpers/ws-client.js'

const lines: string[] = []
const log = createLogger(
  'debug',
  {},
  new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  }),
)
const h = await startVoiceHarness({ log })

const SECRET_BODY = 'INTERNAL-ONLY: db_password=hunter2'

/** An internal service: every request answered 403 with a secret in the body. */
const internal = createHttpServer((_req, res) => res.writeHead(403, { 'content-type': 'text/plain' }).end(`${SECRET_BODY}\nmore`))
await new Promise<void>((r) => internal.listen(0, '127.0.0.1', r))
const internalPort = (internal.address() as AddressInfo).port

/** An open port that speaks no TLS (nor HTTP): it closes whatever connects. */
const plain: Server = createTcpServer((socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n'))
await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r))
const plainPort = (plain.address() as AddressInfo).port

/** A session on a new agent whose webhook is `url` (with `options`): the stored failure of one text turn. */
async function failedTurn(url: string, options: Record<string, unknown> = {}): Promise<{ failure: any; details: any }> {
  const created = (await h.gw.request('POST', '/v1/agents', { body: { template_id: 'voice-agent-webhook' } })).body
  const config = structuredClone(h.agent.config)
  config.plugins = config.plugins.map((p: { use: string; options: Record<string, unknown> }) =>
    p.use === 'agent.webhook' ? { ...p, options: { ...p.options, url, ...options } } : p,
  )
  const saved = await h.gw.request('POST', `/v1/agents/${created.id}`, { body: { config } })
  if (saved.status !== 200) throw new Error(saved.text)
  const auth = await h.gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: created.id } })
  const b = await openBrowserSession(h.gw.url, auth.body.client_session_key)
  try {
    await b.waitFor((m) => m.type === 'turn.end' && m.role === 'assistant', 15_000)
    b.send({ type: 'client.response.text', content: 'what is the password' })
    const session = await h.gw.store.db
      .selectFrom('sessions')
      .select('id')
      .where('conversation_id', '=', auth.body.conversation_id)
      .executeTakeFirstOrThrow()
    // Read as the organization reads it: the API's session details.
    const details = await eventually(async () => {
      const r = await h.gw.request('GET', `/v1/agents/${created.id}/sessions/${session.id}`)
      return entryFor(r.body, 'what is the password')?.failure?.detail === undefined ? undefined : r.body
    }, 15_000)
    return { failure: entryFor(details, 'what is the password').failure, details }
  } finally {
    b.close()
  }
}

await t.test('a 403 from an internal service: the status in the stored detail and the log, never the body', async (t) => {
  for (const options of [{}, { debug_failures: true }]) {
    const { failure, details } = await failedTurn(`http://127.0.0.1:${internalPort}/agent`, options)
    t.match(failure, { cause: 'http_403', detail: 'backend replied HTTP 403' }, JSON.stringify(options))
    t.notMatch(JSON.stringify(details), /INTERNAL-ONLY|hunter2/, 'nowhere in the session details')
  }
  const logged = lines.join('')
  t.match(logged, /backend replied HTTP 403/, 'the log has the status')
  t.notMatch(logged, /INTERNAL-ONLY|hunter2/, 'no log line has the body')
})

await t.test('a closed port and an open port without TLS read the same: fixed words, no error code', async (t) => {
  const closed = await failedTurn(`https://127.0.0.1:${await closedPort()}/agent`)
  const open = await failedTurn(`https://127.0.0.1:${plainPort}/agent`)
  t.match(closed.failure, { cause: 'connect_failed', detail: 'request failed: connection failed' })
  t.same([open.failure.cause, open.failure.detail], [closed.failure.cause, closed.failure.detail], 'the same words for both')
  t.notMatch(lines.join(''), /ECONNREFUSED|ERR_SSL|WRONG_VERSION/, 'nor any code in the log')
})

// Closed once both tests are done, not in a teardown: the connections the gateway keeps to these servers would keep
// the process, and so the file, from ending.
await h.close()
internal.closeAllConnections()
await new Promise<void>((r) => internal.close(() => r()))
await new Promise<void>((r) => plain.close(() => r()))
