/**
 * The one error registry. Every error that can reach a client has a stable code, an HTTP status and a
 * message that is safe to show. Anything else that escapes becomes `internal` with a generic message, so no
 * stack trace or SQL ever reaches a client.
 */

/** Registry entries: code -> HTTP status and default message. */
export const ERRORS = {
  bad_json: { status: 400, message: 'request body is not valid JSON' },
  bad_request: { status: 400, message: 'invalid request' },
  validation_failed: { status: 400, message: 'invalid request body' },
  unsupported_media_type: { status: 415, message: 'unsupported content type' },
  missing_api_key: { status: 400, message: 'missing bearer token' },
  invalid_api_key: { status: 400, message: 'invalid bearer token' },
  admin_disabled: { status: 403, message: 'the admin API is disabled: set ADMIN_TOKEN to enable it' },
  admin_unauthorized: { status: 401, message: 'invalid admin token' },
  invalid_agent_link: { status: 401, message: 'this agent link is unknown or has been revoked' },
  metrics_unauthorized: { status: 401, message: 'missing or invalid metrics token: send Authorization: Bearer <METRICS_TOKEN>' },
  invalid_agent_id: { status: 400, message: 'invalid agent id' },
  invalid_conversation_id: { status: 400, message: 'invalid conversation id' },
  invalid_phone_number: { status: 400, message: 'invalid phone number' },
  phone_number_not_assigned: { status: 400, message: 'from_phone_number is not assigned to this agent' },
  carrier_not_configured: { status: 400, message: 'carrier credentials are not configured for this organization' },
  insufficient_balance: { status: 402, message: 'insufficient balance' },
  invalid_signature: { status: 403, message: 'invalid carrier signature' },
  not_found: { status: 404, message: 'not found' },
  agent_not_found: { status: 404, message: 'agent not found' },
  session_not_found: { status: 404, message: 'session not found' },
  organization_not_found: { status: 404, message: 'organization not found' },
  template_not_found: { status: 404, message: 'agent template not found' },
  agent_link_not_found: { status: 404, message: 'agent link not found' },
  recording_not_found: { status: 404, message: 'no recording for this session' },
  recording_in_progress: { status: 409, message: 'the recording is still being made: retry after the session.update webhook' },
  range_not_satisfiable: { status: 416, message: 'the requested byte range is not satisfiable' },
  method_not_allowed: { status: 405, message: 'method not allowed' },
  phone_number_taken: { status: 409, message: 'phone number is assigned to another agent' },
  session_not_connected: { status: 409, message: 'the session is not connected' },
  payload_too_large: { status: 413, message: 'request body too large' },
  concurrency_limit: { status: 429, message: 'concurrent session limit reached' },
  carrier_error: { status: 502, message: 'the carrier rejected the request' },
  carrier_rejected: { status: 400, message: 'the carrier rejected the call' },
  carrier_auth_failed: {
    status: 502,
    message: 'the carrier refused the stored credentials: check the account sid and auth token (PUT /admin/v1/organizations/{id}/carrier)',
  },
  carrier_rate_limited: { status: 503, message: 'the carrier is rate limiting calls: retry later' },
  carrier_unavailable: { status: 502, message: 'the carrier API is unavailable' },
  carrier_timeout: { status: 504, message: 'the carrier API did not answer in time; the call may or may not have been placed' },
  shutting_down: { status: 503, message: 'the gateway is shutting down' },
  database_unavailable: { status: 503, message: 'database unavailable' },
  internal: { status: 500, message: 'internal error' },
} as const satisfies Record<string, { status: number; message: string }>

/** A registered error code. */
export type ErrorCode = keyof typeof ERRORS

/** An error with a registered code; its message is safe to send to a client. */
export class VoxgateError extends Error {
  readonly code: ErrorCode
  readonly status: number
  /** Extra safe detail for the client, such as a list of validation errors. */
  readonly details: string[] | undefined

  constructor(code: ErrorCode, message?: string, options?: { details?: string[]; cause?: unknown }) {
    super(message ?? ERRORS[code].message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'VoxgateError'
    this.code = code
    this.status = ERRORS[code].status
    this.details = options?.details
  }
}

/** Builds a registered error; `message` overrides the registry's default text. */
export function voxError(code: ErrorCode, message?: string, options?: { details?: string[]; cause?: unknown }): VoxgateError {
  return new VoxgateError(code, message, options)
}

/** True when `e` is a registered error. */
export function isVoxgateError(e: unknown): e is VoxgateError {
  return e instanceof VoxgateError
}
