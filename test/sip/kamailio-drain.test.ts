/**
 * Two gateway replicas (one database) behind Kamailio's dispatcher, run with the project's own config
 * (docker/kamailio/kamailio.cfg): calls through Kamailio reach both replicas and their in-dialog requests follow
 * the record-route; then one replica drains the way SIGTERM drains it (`gateway.close(grace)`): new INVITEs that
 * Kamailio sends it get 503 and are failed over to the other replica, while the call live on the draining one goes
 * on (RTP still arriving, its BYE answered through Kamailio) until it ends, and only then does that replica close.
 * The caller is the test phone (test/helpers/sip-caller.ts), which records the RTP it hears.
 */
import t from 'tap'
import { toolSkip } from '../helpers/tool-required.js'
import { VENDOR_TABLE } from '../../pipeline/index.js'
import { getHeader } from '../../transports/sip/message/sip-message.js'
import { eventually, newBackendTenant, sse, startCarrierGateway } from '../carrier-e2e/carrier-setup.js'
import { hasKamailio, type Kamailio, startKamailio } from '../helpers/kamailio.js'
import { SipCaller } from '../helpers/sip-caller.js'
import { freeSipPort } from '../helpers/sip-wire.js'
import { addTrunk, startSipWorld } from './sip-setup.js'

const skip = toolSkip(hasKamailio() ? false : 'kamailio is not installed (/usr/sbin/kamailio; apt-get install kamailio, as .ci/run does)')

t.test(
  'behind Kamailio: calls reach both replicas; a draining replica fails new calls over and keeps its live one',
  { skip },
  async (t) => {
    const world = await startSipWorld(t)
    const a = world.c
    const config = a.gw.config
    const sipA = config.sip
    if (sipA === undefined) throw new Error('no SIP settings')
    // The second replica: the same vendors and database, SIP on a free port of its own, RTP in a range of its own.
    const vendorEnv: Record<string, string> = {}
    for (const row of VENDOR_TABLE) {
      const setting = config.vendors[row.id]
      if (setting?.apiKey === undefined) continue
      vendorEnv[row.env.url] = setting.url
      vendorEnv[row.env.key] = setting.apiKey
    }
    const b = await startCarrierGateway(
      {
        ...vendorEnv,
        SIP_PORT: '0',
        SIP_HOST: '127.0.0.1',
        SIP_PUBLIC_HOST: '127.0.0.1',
        RTP_PORT_MIN: String(sipA.rtpPortMax + 2),
        RTP_PORT_MAX: String(sipA.rtpPortMax + 202),
        SIP_CREDENTIALS_KEY: 'ab'.repeat(32),
      },
      undefined,
      a.gw.db,
    )
    t.teardown(() => b.gw.close())
    const replicas = [a.gw.gateway, b.gw.gateway]
    const ports = replicas.map((g) => g.sip?.port ?? 0)

    const { tenant, backend } = await newBackendTenant(t, a, 'kamailio-token')
    backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello through the balancer.' : 'Noted.')
    await addTrunk(world, tenant.apiKey, { allowed_cidrs: ['127.0.0.1/32'] }, 'kamailio')

    const lb: Kamailio = await startKamailio(
      await freeSipPort(),
      ports.map((p) => `127.0.0.1:${p}`),
    )
    t.teardown(() => lb.close())
    // On a failure, what Kamailio saw says where the request went.
    t.teardown(() => (t.passing() ? undefined : t.comment(`kamailio's log:\n${lb.log().slice(-6000)}`)))
    const live = () => replicas.map((g) => g.sip?.liveCalls ?? 0)

    /** A call through Kamailio, answered and acknowledged. */
    const call = async (what: string): Promise<SipCaller> => {
      const p = await SipCaller.open({ host: '127.0.0.1', port: lb.port })
      t.teardown(() => p.close())
      p.invite(tenant.number)
      const ok = await p.final(8_000)
      if (ok.status !== 200) throw new Error(`${what}: ${ok.status} ${ok.reason}\n${lb.log().slice(-2000)}`)
      p.ack(ok)
      return p
    }
    const hangUp = async (p: SipCaller, what: string) => {
      p.bye()
      t.equal((await p.final(5_000)).status, 200, `${what}: BYE answered through Kamailio`)
    }

    // Round-robin: the first call goes to one replica, the second to the other.
    const first = await call('first call')
    t.equal(first.routes.length, 1, 'Kamailio record-routed the dialog')
    t.match(first.routes[0], new RegExp(`^<sip:127\\.0\\.0\\.1:${lb.port};lr`), 'its Record-Route names Kamailio')
    const draining = live().indexOf(1)
    t.not(draining, -1, 'the first call is live on a replica')
    const other = 1 - draining
    const second = await call('second call')
    t.same(live(), [1, 1], 'the second call went to the other replica')

    // The replica holding the first call drains as on SIGTERM: sessions first, its SIP endpoint closes after them.
    let closed = false
    const closing = replicas[draining]!.close(60_000).then(() => {
      closed = true
    })
    t.ok(replicas[draining]!.sip?.isDraining, 'the replica drains')
    const third = await call('third call')
    const fourth = await call('fourth call')
    t.same(live()[other], 3, 'both new calls are answered by the other replica')
    t.equal(live()[draining], 1, 'the draining replica took no new call and kept its live one')
    t.match(
      lb.log(),
      new RegExp(`voxgate replica failover: INVITE \\S+ got 503, next replica sip:127\\.0\\.0\\.1:${ports[other]}`),
      "Kamailio failed the draining replica's 503 over to the other one",
    )

    // The live call on the draining replica goes on: RTP keeps coming, and its BYE reaches it through Kamailio.
    const heard = first.heard.length
    await eventually(async () => (first.heard.length >= heard + 25 ? true : undefined), 5_000, 'RTP still arriving on the draining replica')
    t.pass('RTP still flows on the live call of the draining replica')
    t.notOk(closed, 'the draining replica waits for its live call')
    await hangUp(first, 'the call on the draining replica')
    await closing
    t.pass('the draining replica closed once its call ended')
    const ended = await a.gw.store.db
      .selectFrom('sessions')
      .selectAll()
      .where('organization_id', '=', tenant.orgId)
      .where('status', '=', 'ended')
      .execute()
    t.same(
      ended.map((r) => r.end_reason),
      ['caller_hangup'],
      'the call ended by its caller, not cut by the drain',
    )

    // The gateway's own BYE follows the route set too: the agent hangs up a call that came through Kamailio.
    backend.reply = (req) =>
      req.json.type === 'session.start'
        ? { kind: 'sse', steps: [{ data: { type: 'response.hangup', content: 'Goodbye.', turn_id: req.json.turn_id } }] }
        : sse(req.json.turn_id)
    const fifth = await call('fifth call')
    const bye = await fifth.byes.next(5_000, "the agent's BYE through Kamailio")
    t.equal(getHeader(bye, 'Call-ID'), fifth.callId)
    t.ok(
      bye.headers.some((h) => h.name === 'Via' && h.value.includes(`127.0.0.1:${lb.port}`)),
      'it came through Kamailio',
    )

    for (const [p, what] of [
      [second, 'second call'],
      [third, 'third call'],
      [fourth, 'fourth call'],
    ] as const)
      await hangUp(p, what)
    await eventually(async () => (replicas[other]!.sip?.liveCalls === 0 ? true : undefined), 5_000, 'no call left')
  },
)
