/**
 * The transferer per channel (gateway/sessions/carrier/call-transfer.ts): a carrier session gets the carrier's, a SIP
 * session its call's own REFER when the peer accepts it, else `transfer_not_supported` naming why (session call
 * control bridges such a call itself before it asks: test/sip/sip-warm-transfer.test.ts); browser and test sessions
 * get none.
 */
import t from 'tap'
import { isVoxgateError } from '../../core/errors.js'
import type { TransferTarget } from '../../core/transfer-target.js'
import { type CallTransferer, transfererFor } from '../../gateway/sessions/carrier/call-transfer.js'
import type { CallReferral } from '../../gateway/sessions/ports/session-port.js'

const row = { id: 'sess_1' } as Parameters<CallTransferer['transfer']>[0]
const target: TransferTarget = { kind: 'number', to: '+14155550100', callerId: undefined }
const signal = new AbortController().signal

function recorder(name: string, calls: string[]): CallTransferer {
  return { transfer: async (r, to) => void calls.push(`${name}:${r.id}:${to.to}`) }
}

function referral(supported: boolean, calls: string[]): CallReferral {
  return { supported, refer: async (to) => void calls.push(`refer:${to.to}`) }
}

t.test('carrier and SIP sessions get their channel transferer; others none', async (t) => {
  const calls: string[] = []
  const deps = { callTransfer: recorder('carrier', calls) }
  await transfererFor({ kind: 'carrier' }, deps)?.transfer(row, target, signal)
  await transfererFor({ kind: 'sip', referral: referral(true, calls) }, deps)?.transfer(row, target, signal)
  t.same(calls, ['carrier:sess_1:+14155550100', 'refer:+14155550100'])
  t.equal(transfererFor({ kind: 'browser' }, deps), undefined)
})

t.test('a SIP peer without REFER: transfer_not_supported, naming why', async (t) => {
  for (const transport of [{ kind: 'sip' as const, referral: referral(false, []) }, { kind: 'sip' as const }]) {
    const calls: string[] = []
    const err = await transfererFor(transport, {})
      ?.transfer(row, target, signal)
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    t.ok(isVoxgateError(err))
    t.match(err, { code: 'transfer_not_supported', message: /does not accept REFER \(its INVITE did not list it in Allow\)/ })
    t.same(calls, [], 'no REFER was attempted')
  }
})
