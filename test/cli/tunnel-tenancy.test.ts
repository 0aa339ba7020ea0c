/**
 * The tunnel endpoint between tenants: the organization's limit counts every tunnel whatever the request says,
 * and `resume` takes back only a tunnel of the same organization and agent still inside its lease. Anything else
 * (a made-up id, another organization's or another agent's tunnel, a lease that ran out) gets a new tunnel with
 * the gateway's own random id: a client never names a tunnel, whose id is its public address.
 */
import t from 'tap'
import WebSocket from 'ws'
import { startTestGateway } from '../helpers/gateway.js'
import { freePort } from '../helpers/nginx.js'
import { MAX_TUNNELS_PER_ORGANIZATION } from '../../gateway/tunnels/tunnel-upgrade.js'

t.setTimeout(120_000)

const port = await freePort()
const publicUrl = `http://127.0.0.1:${port}`
const gw = await startTestGateway({ PORT: String(port), PUBLIC_URL: publicUrl })
t.teardown(() => gw.close())

/** What the endpoint answered: the `tunnel.ready` message, or the refusal's status and body. */
type Opened =
  | { ok: true; ws: WebSocket; tunnelId: string; webhookUrl: string; resumed: boolean }
  | { ok: false; status: number; body: { error?: string; code?: string } }

const sockets: WebSocket[] = []
t.teardown(() => {
  for (const ws of sockets) ws.terminate()
})

function open(key: string, agentId: string, resume?: string): Promise<Opened> {
  const url = new URL(`${gw.url.replace(/^http/, 'ws')}/v1/tunnels`)
  url.searchParams.set('agent_id', agentId)
  if (resume !== undefined) url.searchParams.set('resume', resume)
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } })
    sockets.push(ws)
    ws.on('unexpected-response', (_req, res) => {
      let text = ''
      res.on('data', (c: Buffer) => (text += c.toString()))
      res.on('end', () => resolve({ ok: false, status: res.statusCode ?? 0, body: JSON.parse(text) }))
    })
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString())
      if (m.type === 'tunnel.ready') {
        resolve({ ok: true, ws, tunnelId: m.tunnel_id, webhookUrl: m.webhook_url, resumed: m.resumed === true })
      }
    })
    ws.on('error', reject)
  })
}

/** Drops a tunnel's connection without `close`: the tunnel stays to its lease, as when a CLI's network drops. */
async function drop(opened: Opened): Promise<void> {
  if (!opened.ok) throw new Error('not open')
  const closed = new Promise((r) => opened.ws.once('close', r))
  opened.ws.terminate()
  await closed
}

async function newOrg(name: string): Promise<{ key: string; id: string }> {
  const org = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name } })
  return { key: org.body.api_key, id: org.body.id }
}
async function newAgent(key: string): Promise<string> {
  return (await gw.request('POST', '/v1/agents', { key, body: {} })).body.id
}
async function tunnelRow(id: string) {
  return gw.store.db.selectFrom('tunnels').selectAll().where('id', '=', id).executeTakeFirst()
}

t.test('the limit counts every tunnel: the 11th is refused whatever resume says', async (t) => {
  const org = await newOrg('tunnel-limit')
  const opened: Opened[] = []
  const agents: string[] = []
  for (let i = 1; i <= MAX_TUNNELS_PER_ORGANIZATION; i++) {
    agents.push(await newAgent(org.key))
    const o = await open(org.key, agents.at(-1)!, i % 2 === 0 ? `tun_${i}` : undefined)
    t.ok(o.ok, `tunnel ${i} opens`)
    if (o.ok) t.not(o.tunnelId, `tun_${i}`, "with the gateway's id, not the one resume named")
    opened.push(o)
  }
  const extra = await newAgent(org.key)
  for (const resume of [undefined, 'tun_11', 'tun_12']) {
    const o = await open(org.key, extra, resume)
    t.same(o.ok ? 'opened' : [o.status, o.body.code], [429, 'tunnel_limit'], `the 11th refused (resume ${resume ?? 'absent'})`)
  }
  for (const id of ['tun_11', 'tun_12']) t.equal(await tunnelRow(id), undefined, `no tunnel ${id}`)

  // Taking one's own tunnel back is no new tunnel: it still works at the limit.
  const first = opened[0]
  if (!first?.ok) throw new Error('the first tunnel did not open')
  await drop(first)
  const back = await open(org.key, agents[0]!, first.tunnelId)
  t.ok(back.ok && back.resumed && back.tunnelId === first.tunnelId, 'a dropped tunnel is taken back at the limit')
})

t.test('resume with a made-up id, a foreign id or another agent id never gets that id', async (t) => {
  const mine = await newOrg('tunnel-resume-mine')
  const theirs = await newOrg('tunnel-resume-theirs')

  const agent = await newAgent(mine.key)
  const madeUp = await open(mine.key, agent, 'tun_madeup')
  t.ok(madeUp.ok, 'a made-up id still gets a tunnel')
  if (!madeUp.ok) return
  t.not(madeUp.tunnelId, 'tun_madeup', 'a new random id')
  t.match(madeUp.tunnelId, /^tun_[A-Za-z0-9_-]{16}$/)
  t.notOk(madeUp.resumed)
  t.equal(await tunnelRow('tun_madeup'), undefined)
  await drop(madeUp)

  // Another organization's tunnel, dropped and inside its lease: its id is not ours to take.
  const foreignTunnel = await open(theirs.key, await newAgent(theirs.key))
  if (!foreignTunnel.ok) throw new Error('their tunnel did not open')
  await drop(foreignTunnel)
  const other = await newAgent(mine.key)
  const foreign = await open(mine.key, other, foreignTunnel.tunnelId)
  t.ok(foreign.ok && foreign.tunnelId !== foreignTunnel.tunnelId && !foreign.resumed, "another organization's id: a new id")
  const theirRow = await tunnelRow(foreignTunnel.tunnelId)
  t.equal(theirRow?.organization_id, theirs.id, 'their tunnel is still theirs')
  if (foreign.ok) await drop(foreign)

  // Another agent of the same organization: the id of `madeUp`'s tunnel (dropped, inside its lease) for `third`.
  const third = await newAgent(mine.key)
  const crossAgent = await open(mine.key, third, madeUp.tunnelId)
  t.ok(crossAgent.ok && crossAgent.tunnelId !== madeUp.tunnelId && !crossAgent.resumed, "another agent's id: a new id")
  t.equal((await tunnelRow(madeUp.tunnelId))?.agent_id, agent, 'the other agent keeps its tunnel')

  // The real thing: the same organization and agent, inside the lease.
  const again = await open(mine.key, agent, madeUp.tunnelId)
  t.ok(again.ok && again.resumed && again.tunnelId === madeUp.tunnelId, 'its own tunnel is taken back')
  if (again.ok) t.equal(again.webhookUrl, madeUp.webhookUrl, 'at the same address')
})

t.test('a tunnel whose lease ran out is not resumed: a new tunnel at a new address', async (t) => {
  const org = await newOrg('tunnel-expired')
  const agent = await newAgent(org.key)
  const first = await open(org.key, agent)
  if (!first.ok) throw new Error('did not open')
  await drop(first)
  // The lease runs out (the CLI slept); the sweep has not come by yet.
  await gw.store.db
    .updateTable('tunnels')
    .set({ lease_expires_at: new Date(Date.now() - 1) })
    .where('id', '=', first.tunnelId)
    .execute()
  const later = await open(org.key, agent, first.tunnelId)
  t.ok(later.ok, 'a tunnel opens')
  if (!later.ok) return
  t.not(later.tunnelId, first.tunnelId, 'with a new id')
  t.notOk(later.resumed)
  t.equal(await tunnelRow(first.tunnelId), undefined, 'the expired tunnel is gone')
  const config = (await gw.request('GET', `/v1/agents/${agent}`, { key: org.key })).body.config
  const url = config.plugins.find((p: { use: string }) => p.use === 'agent.webhook')?.options.url
  t.equal(url, later.webhookUrl, 'the agent points at the new address')
})
