import type { z } from 'zod'

/** Who may call an operation. */
export type Auth = 'api_key' | 'admin' | 'api_key_or_admin' | 'metrics' | 'carrier_signature' | 'agent_link' | 'webhook_signature' | 'none'

/** One documented operation: its route as koa spells it, and the zod schema its handler validates the body with. */
export interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete'
  /** The koa path (`:name` parameters), exactly as the route registers it. */
  path: string
  tag: string
  summary: string
  auth: Auth
  /** The request body's schema: the very object the route parses with. */
  body?: z.ZodType
  /** The query's schema (an object of optional parameters): the very object the route parses with. */
  query?: z.ZodType
  /** `form` for the carrier's form-encoded webhooks; default JSON. */
  bodyType?: 'json' | 'form'
  /** Success status and what it returns. */
  ok: { status: number; description: string; contentType?: string; schemaRef?: string }
  /** Error statuses the route answers with the error body. */
  errors?: number[]
}

/** Error statuses of most /v1 routes. */
export const V1 = [400, 404]
