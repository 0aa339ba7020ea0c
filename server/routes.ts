import Koa from 'koa'
import { newRouter } from '../api/http/router.js'
import { vendorAvailability } from './config.js'
import type { SessionManager } from '../gateway/sessions/session-manager.js'
import type { RecordingObjectStore } from '../gateway/recording/object-store.js'
import type { WebhookEgress } from '../gateway/webhooks/egress-policy.js'
import type { DeliveryOptions } from '../gateway/webhooks/webhook-queue.js'
import { staticClient } from '../transports/http/static-client.js'
import { errorHandler } from '../api/http/error-handler.js'
import { requireApiKey, type ApiState } from '../api/auth.js'
import { adminRouter } from '../api/routes/admin.js'
import { agentsRouter } from '../api/routes/agents.js'
import { agentPhoneNumbersRouter } from '../api/routes/agent-phone-numbers.js'
import { sessionsRouter } from '../api/routes/sessions.js'
import { recordingsRouter } from '../api/routes/recordings.js'
import { healthRouter } from '../api/routes/health.js'
import { carrierHooksRouter } from '../api/routes/carrier-hooks.js'
import { outboundCallsRouter } from '../api/routes/outbound-calls.js'
import { agentLinkSessionsRouter, agentLinksRouter } from '../api/routes/agent-links.js'
import { deviceAuthRouter } from '../api/routes/device-auth.js'
import { accountRouter } from '../api/routes/account.js'
import { sessionListRouter } from '../api/routes/session-list.js'
import { webhookDeliveriesRouter } from '../api/routes/webhook-deliveries.js'
import { metricsRouter } from '../api/routes/metrics.js'
import { docsRouter } from '../api/routes/docs.js'
import { tunnelRequestsRouter } from '../api/routes/tunnel-requests.js'
import { sipTrunksRouter } from '../api/routes/sip-trunks.js'
import { campaignsRouter } from '../api/routes/campaigns.js'
import { campaignContactsRouter } from '../api/routes/campaign-contacts.js'
import { doNotCallRouter } from '../api/routes/do-not-call.js'
import { openApiDocument } from '../api/openapi/openapi-document.js'
import { storeRateLimit } from '../api/http/limits.js'
import type { PrometheusMetrics } from './prometheus-metrics.js'
import type { CarrierPath } from './carrier-path.js'
import type { GatewayDeps } from './gateway-deps.js'

/** Builds the koa application with every route. */
export function buildApp(
  deps: GatewayDeps,
  sessions: SessionManager,
  parts: {
    path: CarrierPath
    metrics: PrometheusMetrics
    recordingObjects?: RecordingObjectStore | undefined
    egress?: WebhookEgress | undefined
  },
): Koa {
  const { path, metrics, recordingObjects, egress } = parts
  const { config, store, log } = deps
  const app = new Koa({ proxy: config.trustProxy })
  app.silent = true
  app.use(errorHandler(log))
  // One limiter for every route: the buckets live in the database, the clock is the one tests may move.
  const rateLimit = storeRateLimit(store.db, deps.clock)

  const health = healthRouter({ store, isDraining: () => sessions.isDraining })
  app.use(health.routes())
  app.use(metricsRouter({ source: deps.metricsSource?.(metrics) ?? metrics, token: config.metricsToken }).routes())
  app.use(docsRouter({ document: openApiDocument(config.publicUrl) }).routes())
  // The demo page at / and its scripts under /client/ (client/dist).
  app.use(staticClient({ log }))

  const admin = adminRouter({ db: store.db, adminToken: config.adminToken, log })
  app.use(admin.routes()).use(admin.allowedMethods({ throw: true }))

  // Signed by the carrier, not behind the API key.
  const carrierHooks = carrierHooksRouter({ calls: path.calls, carrier: path.carrier, publicUrl: config.publicUrl })
  app.use(carrierHooks.routes()).use(carrierHooks.allowedMethods({ throw: true }))

  // Authorized by an agent link's token, not by an API key.
  const linkDeps = {
    db: store.db,
    publicUrl: config.publicUrl,
    webhookPolicy: config.webhookPolicy,
    metrics,
    egress: egress?.policy,
    rateLimit,
  }
  const linkSessions = agentLinkSessionsRouter(linkDeps)
  app.use(linkSessions.routes()).use(linkSessions.allowedMethods({ throw: true }))

  // Device sign-in: the CLI's start and poll need no key; approve and deny check their own credentials.
  const device = deviceAuthRouter({ db: store.db, publicUrl: config.publicUrl, adminToken: config.adminToken, log, rateLimit })
  app.use(device.routes()).use(device.allowedMethods({ throw: true }))

  // The tunnel addresses: signed by the gateway itself, not behind the API key.
  if (deps.tunnels !== undefined) {
    const tunnelRequests = tunnelRequestsRouter({ hub: deps.tunnels })
    app.use(tunnelRequests.routes()).use(tunnelRequests.allowedMethods({ throw: true }))
  }

  const v1 = newRouter<ApiState>()
  v1.use('/v1', requireApiKey(store.db, config.adminToken))
  // Fixed paths (/v1/agents/web/...) are registered before /v1/agents/:agent_id so they win.
  const sessionRoutes = sessionsRouter({
    db: store.db,
    webhookPolicy: config.webhookPolicy,
    liveUsage: (id) => sessions.live.get(id)?.usageSoFar(),
    endSession: (id) => sessions.endAnywhere(id, 'hangup'),
    metrics,
    egress: egress?.policy,
    rateLimit,
  })
  const agents = agentsRouter({
    db: store.db,
    vendors: vendorAvailability(config),
    webhookPolicy: config.webhookPolicy,
    egress: egress?.policy,
    rateLimit,
  })
  v1.use(sessionRoutes.routes(), sessionRoutes.allowedMethods({ throw: true }))
  const recordings = recordingsRouter({ db: store.db, objects: recordingObjects })
  v1.use(recordings.routes(), recordings.allowedMethods({ throw: true }))
  const outbound = outboundCallsRouter({ calls: path.calls, publicUrl: config.publicUrl })
  v1.use(outbound.routes(), outbound.allowedMethods({ throw: true }))
  v1.use(agents.routes(), agents.allowedMethods({ throw: true }))
  const phoneNumbers = agentPhoneNumbersRouter({ db: store.db, carrier: path.carrier, log, rateLimit })
  v1.use(phoneNumbers.routes(), phoneNumbers.allowedMethods({ throw: true }))
  const account = accountRouter({ db: store.db })
  v1.use(account.routes(), account.allowedMethods({ throw: true }))
  const sessionList = sessionListRouter({ db: store.db })
  v1.use(sessionList.routes(), sessionList.allowedMethods({ throw: true }))
  const deliveries = webhookDeliveriesRouter({ db: store.db, webhookPolicy: config.webhookPolicy, log, egress })
  v1.use(deliveries.routes(), deliveries.allowedMethods({ throw: true }))
  const links = agentLinksRouter(linkDeps)
  v1.use(links.routes(), links.allowedMethods({ throw: true }))
  const sipTrunks = sipTrunksRouter({ db: store.db, credentialsKey: config.sipCredentialsKey, rateLimit })
  v1.use(sipTrunks.routes(), sipTrunks.allowedMethods({ throw: true }))
  const campaignWebhooks = { db: store.db, log, webhookPolicy: config.webhookPolicy, webhookDelivery: campaignDelivery(deps, egress) }
  const campaigns = campaignsRouter({ db: store.db, webhooks: campaignWebhooks, now: deps.campaigns?.now })
  v1.use(campaigns.routes(), campaigns.allowedMethods({ throw: true }))
  const contacts = campaignContactsRouter({ db: store.db })
  v1.use(contacts.routes(), contacts.allowedMethods({ throw: true }))
  const dnc = doNotCallRouter({ db: store.db })
  v1.use(dnc.routes(), dnc.allowedMethods({ throw: true }))
  app.use(v1.routes())
  return app
}

/** How campaign webhooks are delivered: as session webhooks are (the egress policy, the tests' backoff). */
export function campaignDelivery(deps: GatewayDeps, egress: WebhookEgress | undefined): DeliveryOptions {
  return {
    ...deps.sessionOverrides?.webhookDelivery,
    ...(egress !== undefined && { fetch: egress.fetch, privateTarget: egress.privateTarget }),
  }
}
