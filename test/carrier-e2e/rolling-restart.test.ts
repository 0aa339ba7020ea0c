/**
 * A rolling restart under a steady stream of new phone calls: three gateway processes on one Postgres server
 * behind nginx (PUBLIC_URL the balancer's), each in turn sent SIGTERM, waited for and replaced by a new process on
 * its port, as the deploy recipe in docs/guides/replicas.md says. No call start may fail: a draining replica answers the voice hook
 * 503 and nginx passes it to another. While each replica drains, the test also checks what it answers directly:
 * /readyz and new calls 503, REST still served, a browser upgrade 503 (the key stays good through the balancer),
 * and the media stream of a call another replica admitted still connects.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { toolSkip } from '../helpers/tool-required.js'
import t from 'tap'
import { STREAM_PATH } from '../../carrier/twilio/markup.js'
import { postSignedForm } from '../fakes/carrier/sign.js'
import { newCallSid, placeCall, type CallEnd, type PlaceCallResult, type SimulatedCall } from '../fakes/carrier/phone-simulator.js'
import { spawnGateway, type ChildGateway } from '../helpers/spawn-gateway.js'
import { freePort, hasNginx, startNginx, UPSTREAM_FAIL_TIMEOUT_MS } from '../helpers/nginx.js'
import { connectBrowser } from '../helpers/ws-client.js'
import { eventually, newTenant, startCarrierGateway, type CarrierTenant } from './carrier-setup.js'

const onServer = process.env.DATABASE_URL !== undefined
const skip = !onServer
  ? 'needs DATABASE_URL: replicas share one Postgres server'
  : toolSkip(hasNginx() ? false : 'needs nginx (/usr/sbin/nginx)')
t.setTimeout(120_000)

const HOOK = '/v1/agents/carrier/twiml'
const CALLER = '+442071838750'
/** Far longer than any call here lasts: live calls on a draining replica end on their own. */
const GRACE_MS = 8_000

/** One call of the steady stream, as the phone saw it. */
interface StreamCall {
  readonly callSid: string
  readonly placedAt: number
  readonly result: PlaceCallResult
  readonly end: CallEnd | undefined
}

/** One replica's restart, as the test did it. */
interface Restart {
  readonly old: ChildGateway
  readonly replacement: ChildGateway
  readonly sigtermAt: number
  /** When the old process had exited: nginx's requests to its port after this went to the replacement. */
  readonly exitedAt: number
  readonly readyAt: number
}

t.test('rolling restart of every replica during a steady stream of new calls: no call start fails', { skip }, async (t) => {
  const port = await freePort()
  const publicUrl = `http://127.0.0.1:${port}`
  // The in-process gateway only sets up tenants and reads the database; it is not behind the balancer.
  const setup = await startCarrierGateway({ PUBLIC_URL: publicUrl })
  t.teardown(() => setup.gw.close())
  const db = setup.gw.store.db
  const env = {
    DATABASE_URL: setup.gw.db.options.databaseUrl!,
    PUBLIC_URL: publicUrl,
    ADMIN_TOKEN: '',
    ALLOW_INSECURE_WEBHOOKS: '1',
    SHUTDOWN_GRACE_MS: String(GRACE_MS),
  }
  const spawn = async (replicaPort: number) => {
    const child = await spawnGateway(env, { port: replicaPort })
    t.teardown(() => child.kill('SIGKILL'))
    return child
  }
  const ports = [await freePort(), await freePort(), await freePort()]
  const replicas = await Promise.all(ports.map(spawn))
  const lb = await startNginx(
    port,
    ports.map((p) => `127.0.0.1:${p}`),
  )
  t.teardown(() => lb.close())
  const token = 'rolling-token'
  const tenant = await newTenant(setup, { carrier: { authToken: token }, limit: null })

  // The steady stream: a new call through the balancer every 250-400 ms, each on for 1-2 s, then hung up.
  const calls: Promise<StreamCall>[] = []
  const sids: string[] = []
  let streaming = true
  const stream = (async () => {
    for (let i = 0; streaming; i++) {
      const callSid = newCallSid()
      sids.push(callSid)
      calls.push(streamCall(publicUrl, tenant, token, callSid, 1_000 + ((i * 379) % 1_000)))
      await delay(250 + ((i * 97) % 150))
    }
  })()

  const restarts: Restart[] = []
  const current = [...replicas]
  for (const [i, old] of replicas.entries()) {
    const live = current.filter((r) => r !== old)
    await t.test(`replica ${i + 1} drains while calls go on`, async (t) => {
      // A call live on this replica when the SIGTERM comes: it must go on until it is hung up.
      const held = await callOn(publicUrl, tenant, token, old, old)
      const sigtermAt = Date.now()
      const startedAtSigterm = sids.length
      old.proc.kill('SIGTERM')
      t.equal(await readiness(old.url, 503), 503, '/readyz answers 503 at once')

      const hook = await postSignedForm({
        postTo: `${old.url}${HOOK}`,
        signedUrl: `${publicUrl}${HOOK}`,
        form: voiceHookForm(newCallSid(), tenant.number),
        authToken: token,
      })
      t.same([hook.status, hook.retryAfter], [503, '1'], 'a new call gets 503 with Retry-After: 1')
      t.match(jsonOrText(hook.body), { code: 'shutting_down', error: /draining/ }, "in the SPEC's error body")

      const rest = await fetch(`${old.url}/v1/agents`, { headers: { authorization: `Bearer ${tenant.apiKey}` } })
      t.equal(rest.status, 200, 'the REST API is still served')

      const auth = await setup.gw.request('POST', '/v1/agents/web/authorize_session', {
        key: tenant.apiKey,
        body: { agent_id: tenant.agentId },
      })
      const refused = await connectBrowser(old.url, auth.body.client_session_key)
      t.same(refused.ok ? 101 : [refused.status, refused.retryAfter], [503, '1'], 'a browser upgrade gets 503 with Retry-After: 1')
      const browser = await connectBrowser(publicUrl, auth.body.client_session_key)
      t.ok(browser.ok, 'the same key connects through the balancer')
      if (browser.ok) browser.ws.close()

      // Admitted by another replica, streamed to this one: its slot is held, so it connects here.
      const admittedElsewhere = await callOn(publicUrl, tenant, token, live[0]!, old)

      // The stream goes on through the drain: three more calls start before this replica's replacement is up (a
      // quick drain and restart would otherwise leave the window with fewer calls in it than the check below needs).
      await eventually(async () => (sids.length >= startedAtSigterm + 3 ? true : undefined), 10_000)
      t.ok(held.isOpen, 'the call live at the SIGTERM still goes on')
      t.equal((await held.hangup()).by, 'caller', 'and ends when the caller hangs up')
      t.equal((await admittedElsewhere.hangup()).by, 'caller', 'so does the call admitted elsewhere and streamed here')
      t.same(await old.exited, { code: 0, signal: null }, 'the drained replica exits cleanly')
      const exitedAt = Date.now()

      const replacement = await spawn(ports[i]!)
      t.equal(await readiness(replacement.url, 200), 200, `replacement on port ${ports[i]} is ready`)
      restarts.push({ old, replacement, sigtermAt, exitedAt, readyAt: Date.now() })
      current[i] = replacement
      for (const [sid, what] of [
        [held.callSid, 'the call held over the drain'],
        [admittedElsewhere.callSid, 'the call admitted elsewhere'],
      ] as const) {
        const row = await eventually(async () => {
          const s = await db.selectFrom('sessions').selectAll().where('call_sid', '=', sid).executeTakeFirst()
          return s?.status === 'ended' ? s : undefined
        }, 10_000)
        t.match(row, { lease_owner: old.leaseOwner, end_reason: 'caller_hangup' }, `${what} ran on the draining replica to its end`)
      }
      // The recipe: nginx tries the replacement again only after fail_timeout; then the next replica may go.
      await delay(UPSTREAM_FAIL_TIMEOUT_MS + 500)
    })
  }

  // Until every replacement has taken a call of the stream. nginx sends a restarted port one request per
  // fail_timeout until one succeeds (within ~2 s of readiness here), then it is back in the round robin. Only
  // connected calls count: a call waiting for its stream has the lease of the replica that answered its voice
  // hook, and the replica its stream lands on takes the lease over when it connects. When that first request is a
  // voice hook, its call streams to another replica: counting waiting calls ended the wait on it, the stream
  // stopped, and no call of the stream had the replacement's lease in the end.
  const owners = async () =>
    new Set(
      (
        await db.selectFrom('sessions').select('lease_owner').where('call_sid', 'in', sids).where('started_at', 'is not', null).execute()
      ).map((r) => r.lease_owner),
    )
  const waitFrom = Date.now()
  const waited = await eventually(async () => {
    const seen = await owners()
    return restarts.every((r) => seen.has(r.replacement.leaseOwner)) ? true : undefined
  }, 15_000).then(
    () => `every replacement had a connected call ${Date.now() - waitFrom} ms into the wait`,
    () => `timed out after ${Date.now() - waitFrom} ms`,
  )
  streaming = false
  await stream
  const done = await Promise.all(calls)

  /** Where the stream's calls went around a restart: printed when a replacement took none of them. */
  const whereCallsWent = async (r: Restart, port: number) => {
    const ownerOf = new Map<string, string>()
    for (const [i, x] of replicas.entries()) ownerOf.set(x.leaseOwner, `replica ${i + 1}`)
    for (const [i, x] of restarts.entries()) ownerOf.set(x.replacement.leaseOwner, `replacement ${i + 1}`)
    const connected = await db
      .selectFrom('sessions')
      .select('lease_owner')
      .where('call_sid', 'in', sids)
      .where('started_at', 'is not', null)
      .execute()
    const connectedCallsBy: Record<string, number> = {}
    for (const { lease_owner } of connected) {
      const who = ownerOf.get(lease_owner ?? '') ?? String(lease_owner)
      connectedCallsBy[who] = (connectedCallsBy[who] ?? 0) + 1
    }
    // The process behind an upstream address at a time: the replacement once the replica it replaced exited.
    const processAt = (upstream: string, at: number) => {
      const i = ports.findIndex((p) => upstream === `127.0.0.1:${p}`)
      if (i < 0) return upstream
      const restart = restarts[i]
      return `${restart !== undefined && at >= restart.exitedAt ? 'replacement' : 'replica'} ${i + 1} (port ${ports[i]})`
    }
    const kind = (uri: string) => (uri === HOOK ? 'voice hook' : 'media stream')
    // A WebSocket's line is written when it closes: a stream still open is not listed.
    const requests = lb
      .accessLog()
      .filter((l) => l.startedAt >= r.exitedAt && (l.uri === HOOK || l.uri.startsWith(STREAM_PATH)))
      .sort((a, b) => a.startedAt - b.startedAt)
      .slice(0, 80)
      .map((l) => {
        const to = l.tried.map((u, k) => `${processAt(u, l.startedAt)}: ${l.upstreamStatuses[k] ?? '?'}`).join(', then ')
        return `${l.startedAt - r.readyAt} ms ${kind(l.uri)} -> ${to}`
      })
    return {
      port,
      readyAt: r.readyAt,
      connectedCallsBy,
      /** From the old process's exit, in ms from the replacement's readiness (502: connection refused). */
      requests,
      nginxErrorsForThisPort: lb
        .errorLog()
        .split('\n')
        .filter((l) => l.includes(`127.0.0.1:${port}/`))
        .map((l) => l.replace(/, client: .*?, upstream:/, ', upstream:')),
    }
  }

  const failed = done.filter((c) => c.result.outcome !== 'connected')
  t.equal(restarts.length, 3, 'every replica was restarted')
  t.same(
    failed.map((c) => ({ sid: c.callSid, ...c.result })),
    [],
    `every call start connected: ${done.length - failed.length} of ${done.length}`,
  )
  for (const [i, r] of restarts.entries()) {
    const during = done.filter((c) => c.placedAt >= r.sigtermAt && c.placedAt <= r.readyAt).length
    t.ok(during >= 3, `${during} calls started while replica ${i + 1} drained and restarted`)
  }
  const seen = await owners()
  for (const [i, r] of restarts.entries()) {
    const ran = seen.has(r.replacement.leaseOwner)
    t.ok(ran, `calls ran on replacement ${i + 1}`, ran ? {} : { wait: waited, ...(await whereCallsWent(r, ports[i]!)) })
  }

  const connected = done.filter((c) => c.result.outcome === 'connected').map((c) => c.callSid)
  const rows = await eventually(async () => {
    const found = await db
      .selectFrom('sessions')
      .select(['call_sid', 'status', 'end_reason', 'lease_owner', 'started_at'])
      .where('call_sid', 'in', connected)
      .execute()
    return found.length === connected.length && found.every((s) => s.status === 'ended') ? found : undefined
  }, 15_000)
  // A stream nginx handed to a draining replica connects there (its slot is held) and may still be live at the
  // end of the grace period: it then gets session.end with `shutdown`. Every other call ends as its caller hung up.
  const drained = new Set(restarts.map((r) => r.old.leaseOwner))
  const cut = rows.filter((s) => s.end_reason !== 'caller_hangup')
  t.ok(
    cut.every((s) => s.end_reason === 'shutdown' && drained.has(s.lease_owner ?? '')),
    `calls not ended by their caller were cut by a drained replica's grace period: ${cut.length}`,
  )
  const cutSids = new Set(cut.map((s) => s.call_sid))
  t.ok(
    done.filter((c) => cutSids.has(c.callSid)).every((c) => c.end?.by === 'server'),
    'a call cut at the end of the grace period was closed by the gateway',
  )
  const onDraining = rows.filter((s) =>
    restarts.some((r) => s.lease_owner === r.old.leaseOwner && s.started_at !== null && s.started_at.getTime() >= r.sigtermAt),
  )
  t.comment(`${onDraining.length} streamed calls connected to a replica while it drained (its slot held since the voice hook)`)

  // nginx's view: every voice hook answered 200 in the end; some were passed on by a draining or stopped replica.
  const hooks = lb.accessLog().filter((l) => l.uri === HOOK)
  t.ok(
    hooks.every((l) => l.status === 200),
    `nginx answered every voice hook 200 (${hooks.length})`,
  )
  // Which call starts met a draining or stopped replica is up to round robin, and the stream's requests (hook,
  // stream, callbacks) alias with it: hooks alone may all miss a draining replica (seen once in CI). A stream or a
  // hook sent to a stopped one is refused and passed on, and some request reaches each port while it is down.
  const passedOn = lb.accessLog().filter((l) => (l.uri === HOOK || l.uri.startsWith(STREAM_PATH)) && l.tried.length > 1)
  const hooksPassedOn = passedOn.filter((l) => l.uri === HOOK)
  const by503 = hooksPassedOn.filter((l) => l.upstreamStatuses.includes(503)).length
  t.ok(
    passedOn.length > 0,
    `${passedOn.length} call starts passed to another replica: ${hooksPassedOn.length} voice hooks (${by503} after a 503), ${passedOn.length - hooksPassedOn.length} media streams`,
  )
})

/** The voice hook's form for a new inbound call. */
function voiceHookForm(callSid: string, to: string): Record<string, string> {
  return { AccountSid: `AC${'0'.repeat(32)}`, CallSid: callSid, CallStatus: 'ringing', Direction: 'inbound', From: CALLER, To: to }
}

/** One call of the stream: placed through the balancer, on for `holdMs`, then hung up (unless the gateway ended it). */
async function streamCall(publicUrl: string, tenant: CarrierTenant, token: string, callSid: string, holdMs: number): Promise<StreamCall> {
  const placedAt = Date.now()
  const result = await placeCall({
    voiceHookUrl: `${publicUrl}${HOOK}`,
    authToken: token,
    from: CALLER,
    to: tenant.number,
    callSid,
    realtime: false,
  })
  if (result.outcome !== 'connected') return { callSid, placedAt, result, end: undefined }
  const ended = await Promise.race([result.call.ended, delay(holdMs).then(() => undefined)])
  return { callSid, placedAt, result, end: ended ?? (await result.call.hangup()) }
}

/** A call whose voice hook goes straight to `hookOn` and its media stream straight to `streamOn`. */
async function callOn(
  publicUrl: string,
  tenant: CarrierTenant,
  token: string,
  hookOn: ChildGateway,
  streamOn: ChildGateway,
): Promise<SimulatedCall> {
  const wsPublic = publicUrl.replace(/^http/, 'ws')
  const r = await placeCall({
    voiceHookUrl: `${hookOn.url}${HOOK}`,
    publicUrl: `${publicUrl}${HOOK}`,
    authToken: token,
    from: CALLER,
    to: tenant.number,
    realtime: false,
    rewriteUrl: (url) => url.replace(wsPublic, streamOn.url.replace(/^http/, 'ws')),
  })
  if (r.outcome !== 'connected') throw new Error(`call not connected: ${JSON.stringify(r)}`)
  return r.call
}

/** A body as JSON, or its text when it is not JSON (so a wrong answer fails an assertion, not the test). */
function jsonOrText(body: string): unknown {
  try {
    return JSON.parse(body)
  } catch {
    return body
  }
}

/** Polls `/readyz` until it answers `status` (the signal reaches the process asynchronously). */
async function readiness(url: string, status: number): Promise<number> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const got = await fetch(`${url}/readyz`).then(
      (r) => r.status,
      () => 0,
    )
    if (got === status || Date.now() > deadline) return got
    await delay(20)
  }
}
