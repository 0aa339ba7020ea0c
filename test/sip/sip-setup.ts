/**
 * A gateway with SIP on for the SIP end-to-end files: the voice world of the carrier tests (fake speech vendors,
 * a backend) plus a SIP port and an RTP range of its own, and a trunk for a tenant.
 */
import { startVoiceWorld, type VoiceWorld } from '../carrier-e2e/carrier-setup.js'
import { freeSipPort } from '../helpers/sip-wire.js'

export interface SipWorld extends VoiceWorld {
  readonly sipPort: number
}

/** Starts the world with SIP on 127.0.0.1 (or `env`'s overrides, such as SIP_HOST=0.0.0.0). */
export async function startSipWorld(t: { teardown(fn: () => unknown): void }, env: Record<string, string> = {}): Promise<SipWorld> {
  const sipPort = await freeSipPort()
  const rtpMin = 30_000 + 2 * Math.floor(Math.random() * 10_000)
  const world = await startVoiceWorld(t, {
    SIP_PORT: String(sipPort),
    SIP_HOST: '127.0.0.1',
    SIP_PUBLIC_HOST: '127.0.0.1',
    RTP_PORT_MIN: String(rtpMin),
    RTP_PORT_MAX: String(rtpMin + 200),
    SIP_CREDENTIALS_KEY: 'ab'.repeat(32),
    ...env,
  })
  return { ...world, sipPort }
}

/** Adds an inbound trunk to the organization of `apiKey`; throws unless it was made. */
export async function addTrunk(world: VoiceWorld, apiKey: string, inbound: Record<string, unknown>, name = 'pbx'): Promise<void> {
  const r = await world.c.gw.request('POST', '/v1/sip/trunks', { key: apiKey, body: { name, inbound } })
  if (r.status !== 201) throw new Error(r.text)
}
