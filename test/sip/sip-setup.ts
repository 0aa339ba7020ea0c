/**
 * A gateway with SIP on for the SIP end-to-end files: the voice world of the carrier tests (fake speech vendors,
 * a backend) plus a SIP port and an RTP range of its own, and a trunk for a tenant.
 */
import { startVoiceWorld, type VoiceWorld } from '../carrier-e2e/carrier-setup.js'

export interface SipWorld extends VoiceWorld {
  readonly sipPort: number
}

/** Starts the world with SIP on 127.0.0.1 (or `env`'s overrides, such as SIP_HOST=0.0.0.0). */
export async function startSipWorld(
  t: { teardown(fn: () => unknown): void },
  env: Record<string, string> = {},
  carrier?: Parameters<typeof startVoiceWorld>[2],
  sessionOverrides?: Parameters<typeof startVoiceWorld>[3],
): Promise<SipWorld> {
  const rtpMin = 30_000 + 2 * Math.floor(Math.random() * 10_000)
  // SIP_PORT=0: the endpoint binds a free port itself (a port picked here and bound later was once taken between).
  const world = await startVoiceWorld(
    t,
    {
      SIP_PORT: '0',
      SIP_HOST: '127.0.0.1',
      SIP_PUBLIC_HOST: '127.0.0.1',
      RTP_PORT_MIN: String(rtpMin),
      RTP_PORT_MAX: String(rtpMin + 200),
      SIP_CREDENTIALS_KEY: 'ab'.repeat(32),
      ...env,
    },
    carrier,
    sessionOverrides,
  )
  const sipPort = world.c.gw.gateway.sip?.port
  if (sipPort === undefined) throw new Error('the gateway started without SIP')
  return { ...world, sipPort }
}

/** Adds an inbound trunk to the organization of `apiKey`; throws unless it was made. */
export async function addTrunk(world: VoiceWorld, apiKey: string, inbound: Record<string, unknown>, name = 'pbx'): Promise<void> {
  const r = await world.c.gw.request('POST', '/v1/sip/trunks', { key: apiKey, body: { name, inbound } })
  if (r.status !== 201) throw new Error(r.text)
}
