import type { Log } from '../core/log.js'
import { egressFetch } from '../gateway/webhooks/egress-fetch.js'
import { EgressPolicy, type WebhookEgress } from '../gateway/webhooks/egress-policy.js'
import { SENT_AT_HEADER } from '../gateway/tunnels/tunnel-codec.js'
import { TUNNEL_HTTP_PREFIX } from '../gateway/tunnels/tunnel-upgrade.js'
import type { GatewayConfig } from './config.js'

/** Every webhook's way out (agent and lifecycle), and what it needs once the server listens. */
export interface GatewayEgress extends WebhookEgress {
  readonly policy: EgressPolicy
  /** The gateway's own port, once it listens (a webhook to it is the tunnel relay's). */
  listeningOn(port: number): void
  close(): Promise<void>
}

/** Every webhook (agent and lifecycle) connects through the egress policy. */
export function webhookEgress(config: GatewayConfig, log: Log): GatewayEgress {
  let listeningPort: number | undefined
  const policy = new EgressPolicy({
    ownPort: () => listeningPort ?? config.port,
    publicUrl: config.publicUrl,
    allowCidrs: config.egressAllowCidrs,
    denyCidrs: config.egressDenyCidrs,
    // A developer's backend runs on their machine; documented as never for production.
    allowLoopback: config.allowInsecureWebhooks,
    // The tunnel relay: a webhook may call the gateway itself there (it reaches a connected CLI).
    selfPathPrefixes: [TUNNEL_HTTP_PREFIX],
  })
  // A request to the gateway's own tunnel says when it left, so a cancel at the agent step's deadline is named a
  // timeout on the developer's screen (the tunnel route does not pass the header on).
  const http = egressFetch(policy, {
    ownHeaders: () => ({ [SENT_AT_HEADER]: String(Date.now()) }),
    // The organization's report says only "refused by the egress policy"; the operator's log says which rule.
    onRefused: (why) => log.warn({ why }, 'webhook refused by the egress policy'),
  })
  return {
    policy,
    fetch: http.fetch,
    privateTarget: http.privateTarget,
    listeningOn: (port) => {
      listeningPort = port
    },
    close: () => http.close(),
  }
}
