/**
 * Two gateway processes on one Postgres server: an action that lands on one replica for a call living on the
 * other reaches it through the command bus (LISTEN/NOTIFY).
 */
import t from 'tap'
import { postSignedForm } from '../fakes/carrier/sign.js'
import { newCallSid, placeCall } from '../fakes/carrier/phone-simulator.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { eventually, newTenant, PUBLIC_URL, sessionOfCall, startCarrierGateway } from './carrier-setup.js'

const onServer = process.env.DATABASE_URL !== undefined

t.test(
  'a final status callback sent to replica B ends a call connected on replica A',
  { skip: !onServer && 'needs DATABASE_URL: two gateway processes share one Postgres server' },
  async (t) => {
    const b = await startCarrierGateway()
    t.teardown(() => b.gw.close())
    const a = await spawnGateway({
      DATABASE_URL: b.gw.db.options.databaseUrl!,
      PUBLIC_URL,
      ADMIN_TOKEN: '',
      ALLOW_INSECURE_WEBHOOKS: '1',
    })
    t.teardown(() => a.kill('SIGKILL'))
    const token = 'cross-replica-token'
    const tenant = await newTenant(b, { carrier: { authToken: token } })
    const callSid = newCallSid()
    const wsA = a.url.replace(/^http/, 'ws')
    const r = await placeCall({
      voiceHookUrl: `${a.url}/v1/agents/carrier/twiml`,
      publicUrl: b.hookUrl,
      authToken: token,
      from: '+442071838750',
      to: tenant.number,
      callSid,
      realtime: false,
      rewriteUrl: (url) => url.replace(PUBLIC_URL.replace(/^https/, 'wss'), wsA),
    })
    t.equal(r.outcome, 'connected', 'the call connected on replica A')
    if (r.outcome !== 'connected') return
    const live = await eventually(async () => {
      const s = await sessionOfCall(b, callSid)
      return s?.status === 'connected' ? s : undefined
    }, 10_000)
    t.not(live.lease_owner, b.gw.gateway.sessions.keeper.owner, 'the session lives on replica A, not B')

    const status = await postSignedForm({
      postTo: b.rewrite(b.statusUrl),
      signedUrl: b.statusUrl,
      form: { CallSid: callSid, CallStatus: 'completed', AccountSid: `AC${'0'.repeat(32)}` },
      authToken: token,
    })
    t.equal(status.status, 204, 'replica B accepted the status callback')
    const row = await eventually(async () => {
      const s = await sessionOfCall(b, callSid)
      return s?.status === 'ended' ? s : undefined
    }, 10_000)
    t.equal(row.end_reason, 'caller_hangup', 'ended as a caller hangup by its own replica')
    t.equal(row.lease_expires_at, null, 'its slot is free')
    const end = await r.call.ended
    t.equal(end.by, 'server', 'replica A closed the media stream')
  },
)
