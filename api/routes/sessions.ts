import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import { z } from 'zod'
import { voxError } from '../../core/errors.js'
import type { Authorization } from '../../gateway/admission/authorize.js'
import { authorizeBrowserSession, type BrowserAuthorizeDeps } from '../../gateway/admission/browser-session.js'
import { getSessionRow, sessionTranscript } from '../../gateway/store/sessions.js'
import { sessionDetails, type LiveUsage } from '../../gateway/sessions/session-details.js'
import type { ApiState } from '../auth.js'
import { readJsonObject } from '../http/body.js'
import { parseOr400 } from '../http/validate.js'
import { storeRateLimit, type RateLimit } from '../http/limits.js'

/** Body of POST /v1/agents/web/authorize_session (also the API reference's schema). */
export const authorizeSchema = z.strictObject({
  agent_id: z.string().min(1).max(200),
  conversation_id: z.string().min(1).max(200).nullable().optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  // Browser SDKs send it to the customer's endpoint, which may pass it on; accepted and not used.
  sdk_version: z.string().max(100).optional(),
  // Named only to be refused clearly: answering machine detection is for outbound phone calls.
  machine_detection: z.unknown().optional(),
})

/** The SPEC's authorize_session answer (also what an agent link's authorization answers). */
export function authorizationBody(auth: Authorization) {
  return { client_session_key: auth.clientSessionKey, conversation_id: auth.conversationId, config: auth.config }
}

/** Largest authorization metadata, serialised; it travels in every webhook. */
const MAX_METADATA_BYTES = 16 * 1024

/** What the sessions routes need; `liveUsage` reads a session running on this process (undefined otherwise). */
export interface SessionsRouterDeps extends BrowserAuthorizeDeps {
  liveUsage?: ((sessionId: string) => LiveUsage | undefined) | undefined
  /** Ends a connected session wherever it runs (this process or another replica). */
  endSession?: ((sessionId: string) => Promise<void>) | undefined
  /** The organization's request rate (default: the store's shared buckets on the wall clock). */
  rateLimit?: RateLimit | undefined
}

/** authorize_session, session details and ending a session (an addition to the SPEC). */
export function sessionsRouter(deps: SessionsRouterDeps): Router<ApiState> {
  const { db } = deps
  const rateLimit = deps.rateLimit ?? storeRateLimit(db)
  const r = newRouter<ApiState>()

  r.post('/v1/agents/web/authorize_session', async (ctx) => {
    // Before the body is read: a flood costs one statement per request, not a parse and a validation.
    await rateLimit(ctx.state.organizationId, 'authorize_session')
    const body = parseOr400(authorizeSchema, await readJsonObject(ctx))
    if (body.machine_detection !== undefined) throw voxError('machine_detection_not_supported')
    if (body.metadata !== undefined && JSON.stringify(body.metadata).length > MAX_METADATA_BYTES) {
      throw voxError('validation_failed', `metadata must be at most ${MAX_METADATA_BYTES} bytes of JSON`)
    }
    ctx.body = authorizationBody(
      await authorizeBrowserSession(deps, {
        organizationId: ctx.state.organizationId,
        agentId: body.agent_id,
        conversationId: body.conversation_id,
        configOverride: body.config,
        metadata: body.metadata,
      }),
    )
  })

  r.get('/v1/agents/:agent_id/sessions/:session_id', async (ctx) => {
    const { agent_id, session_id } = ctx.params as { agent_id: string; session_id: string }
    const row = await getSessionRow(db, ctx.state.organizationId, agent_id, session_id)
    if (row === undefined) throw voxError('session_not_found')
    // Read the live figures after the transcript, so they are at least as recent as the stored turns.
    const transcript = await sessionTranscript(db, row.id)
    ctx.body = sessionDetails(row, transcript, { live: deps.liveUsage?.(row.id), recordingUrl: row.recording_url ?? undefined })
  })

  // Addition to the SPEC: the backend hangs up a call or closes a browser session, whichever replica runs it.
  r.post('/v1/agents/:agent_id/sessions/:session_id/end', async (ctx) => {
    const { agent_id, session_id } = ctx.params as { agent_id: string; session_id: string }
    const row = await getSessionRow(db, ctx.state.organizationId, agent_id, session_id)
    if (row === undefined) throw voxError('session_not_found')
    if (row.status !== 'connected' || deps.endSession === undefined) {
      throw voxError('session_not_connected', `the session is ${row.status}, not connected`)
    }
    await deps.endSession(row.id)
    // The end happens on the replica that runs the session, after this answer: session.end follows as usual.
    ctx.status = 202
    ctx.body = { session_id: row.id, end_requested: true }
  })

  return r
}
