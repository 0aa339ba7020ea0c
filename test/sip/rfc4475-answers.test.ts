/**
 * RFC 4475's torture messages, each sent byte for byte over UDP to an endpoint whose admission admits every
 * INVITE, and its answer checked against the table in docs/reference/sip.md ("RFC 4475"). The messages' Via headers name
 * no port and most ask no rport, so answers go to the source address at 5060 (RFC 3261 section 18.2.2): the test
 * sends from 127.0.47.75:5060, a loopback address of its own, so they come back to it.
 */
import { createSocket, type Socket } from 'node:dgram'
import { readFileSync } from 'node:fs'
import t from 'tap'
import { silentLogger } from '../../core/log.js'
import type { SipSessionPort } from '../../transports/sip/calls/sip-call-transport.js'
import { SipEndpoint } from '../../transports/sip/endpoint/sip-endpoint.js'
import { Inbox, sipRequest, idleSipSession } from '../helpers/sip-wire.js'

/** [message, RFC 4475 section, our answer (null: none)]: the rows of docs/reference/sip.md's table. */
export const RFC4475_ANSWERS: readonly [string, string, number | null][] = [
  ['wsinv', '3.1.1.1', 481],
  ['intmeth', '3.1.1.2', 501],
  ['esc01', '3.1.1.3', 200],
  ['escnull', '3.1.1.4', 405],
  ['esc02', '3.1.1.5', 501],
  ['lwsdisp', '3.1.1.6', 200],
  ['longreq', '3.1.1.7', 200],
  ['dblreq', '3.1.1.8', 405],
  ['semiuri', '3.1.1.9', 200],
  ['transports', '3.1.1.10', 200],
  ['mpart01', '3.1.1.11', 501],
  ['unreason', '3.1.1.12', null],
  ['noreason', '3.1.1.13', null],
  ['badinv01', '3.1.2.1', 400],
  ['clerr', '3.1.2.2', 400],
  ['ncl', '3.1.2.3', 400],
  ['scalar02', '3.1.2.4', 400],
  ['scalarlg', '3.1.2.5', null],
  ['quotbal', '3.1.2.6', 400],
  ['ltgtruri', '3.1.2.7', 400],
  ['lwsruri', '3.1.2.8', 400],
  ['lwsstart', '3.1.2.9', 400],
  ['trws', '3.1.2.10', 400],
  ['escruri', '3.1.2.11', 200],
  ['baddate', '3.1.2.12', 200],
  ['regbadct', '3.1.2.13', 405],
  ['badaspec', '3.1.2.14', 400],
  ['baddn', '3.1.2.15', 400],
  ['badvers', '3.1.2.16', 505],
  ['mismatch01', '3.1.2.17', 400],
  ['mismatch02', '3.1.2.18', 400],
  ['bigcode', '3.1.2.19', null],
  ['badbranch', '3.2.1', 200],
  ['insuf', '3.3.1', 400],
  ['unkscm', '3.3.2', 416],
  ['novelsc', '3.3.3', 416],
  ['unksm2', '3.3.4', 405],
  ['bext01', '3.3.5', 420],
  ['invut', '3.3.6', 415],
  ['regaut01', '3.3.7', 405],
  ['multi01', '3.3.8', 400],
  ['mcl01', '3.3.9', 400],
  ['bcast', '3.3.10', null],
  ['zeromf', '3.3.11', 200],
  ['cparam01', '3.3.12', 405],
  ['cparam02', '3.3.13', 405],
  ['regescrt', '3.3.14', 405],
  ['sdp01', '3.3.15', 406],
  ['inv2543', '3.4.1', 200],
]

const SOURCE = '127.0.47.75'

const session = (): SipSessionPort => idleSipSession('sess_rfc4475')

/**
 * A fresh endpoint for each message: several of them share a branch and a sent-by (unkscm and novelsc), which
 * RFC 3261 section 17.2.3 makes one transaction, so on one endpoint the second would get the first's answer.
 */
async function endpoint() {
  const rtpMin = 44_000 + 2 * Math.floor(Math.random() * 4_000)
  return SipEndpoint.start({
    host: '127.0.0.1',
    port: 0,
    publicHost: '127.0.0.1',
    log: silentLogger(),
    admission: () => ({ admit: true, open: async () => ({ admit: true, session: session() }) }),
    rtpPorts: { min: rtpMin, max: rtpMin + 41 },
  })
}

t.test('every RFC 4475 message gets the answer of the table in docs/reference/sip.md', async (t) => {
  const socket: Socket = createSocket('udp4')
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject)
    socket.bind(5060, SOURCE, () => resolve())
  })
  t.teardown(() => new Promise<void>((resolve) => socket.close(() => resolve())))
  const inbox = new Inbox<string>()
  socket.on('message', (m) => inbox.push(m.toString('latin1')))

  for (const [name, section, expected] of RFC4475_ANSWERS) {
    const sip = await endpoint()
    const send = (bytes: Buffer) => new Promise<void>((resolve) => socket.send(bytes, sip.port, '127.0.0.1', () => resolve()))
    await send(readFileSync(new URL(`fixtures/rfc4475/${name}.dat`, import.meta.url)))
    const marker = `marker-${name}`
    await send(sipRequest({ method: 'OPTIONS', callId: marker, viaHost: SOURCE, viaPort: 5060 }))
    const statuses: number[] = []
    for (;;) {
      const text = await inbox.next(2000, `the answers to ${name}`)
      if (text.includes(`\r\nCall-ID: ${marker}@pbx.example.net\r\n`)) break
      statuses.push(Number(/^SIP\/2\.0 (\d{3}) /.exec(text)?.[1]))
    }
    t.same(statuses, expected === null ? [] : [expected], `${section} ${name}: ${expected ?? 'no answer'}`)
    t.equal(sip.dropped.internal_error, 0, `${name}: nothing threw`)
    // The endpoint closes with the row: a 200 it would resend for want of an ACK cannot reach the next row.
    await sip.close()
  }
})
