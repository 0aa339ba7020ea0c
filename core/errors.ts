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
  json_too_deep: { status: 400, message: 'the JSON nests deeper than 32 levels' },
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
  authorization_pending: { status: 400, message: 'the sign-in has not been approved yet: poll again after `interval` seconds' },
  expired_token: { status: 400, message: 'this device code has expired: start the sign-in again' },
  access_denied: { status: 400, message: 'the sign-in was denied' },
  invalid_grant: { status: 400, message: 'unknown or already used device code' },
  organization_required: { status: 400, message: 'organization_id is required with the admin token' },
  invalid_credentials: { status: 401, message: 'invalid API key or admin token' },
  device_code_not_found: { status: 404, message: 'no pending sign-in with this code: it may have expired or been used' },
  too_many_device_codes: { status: 429, message: 'too many pending sign-ins: approve, deny or let some expire first' },
  not_found: { status: 404, message: 'not found' },
  webhook_delivery_not_found: { status: 404, message: 'webhook delivery not found' },
  webhook_delivery_not_failed: { status: 409, message: 'only a failed webhook delivery can be sent again' },
  webhook_delivery_not_resendable: { status: 409, message: 'this webhook delivery cannot be sent again' },
  agent_not_found: { status: 404, message: 'agent not found' },
  phone_number_not_available: {
    status: 404,
    message:
      "this phone number is not available to this organization. A number becomes claimable when the organization's carrier " +
      'account owns it (carrier credentials stored with PUT /admin/v1/organizations/{id}/carrier), or when the operator ' +
      'reserves it for the organization (PUT /admin/v1/organizations/{id}/phone_numbers/{phone_number})',
  },
  session_not_found: { status: 404, message: 'session not found' },
  organization_not_found: { status: 404, message: 'organization not found' },
  template_not_found: { status: 404, message: 'agent template not found' },
  agent_link_not_found: { status: 404, message: 'agent link not found' },
  sip_trunk_not_found: { status: 404, message: 'SIP trunk not found' },
  sip_trunk_limit: { status: 409, message: 'this organization has as many SIP trunks as it may: delete one first' },
  sip_credentials_key_missing: {
    status: 503,
    message: 'this gateway cannot store SIP trunk passwords: its operator must set SIP_CREDENTIALS_KEY',
  },
  recording_not_found: { status: 404, message: 'no recording for this session' },
  recording_store_unavailable: {
    status: 503,
    message: 'the recording is in an object store this gateway is not configured for (RECORDING_S3_BUCKET)',
  },
  recording_store_failed: { status: 503, message: 'the object store holding the recording did not answer: retry later' },
  recording_in_progress: { status: 409, message: 'the recording is still being made: retry after the session.update webhook' },
  range_not_satisfiable: { status: 416, message: 'the requested byte range is not satisfiable' },
  method_not_allowed: { status: 405, message: 'method not allowed' },
  campaign_not_found: { status: 404, message: 'campaign not found' },
  campaign_state: { status: 409, message: 'the campaign cannot do this in its current state' },
  campaign_full: { status: 409, message: 'a campaign holds at most 100000 contacts' },
  do_not_call: { status: 403, message: "the number is on the organization's do-not-call list" },
  phone_number_taken: { status: 409, message: 'phone number is assigned to another agent' },
  phone_number_reserved_elsewhere: {
    status: 409,
    message: 'this phone number is reserved for or assigned to another organization: send {"move": true} to move it here',
  },
  session_not_connected: { status: 409, message: 'the session is not connected' },
  session_not_ended: { status: 409, message: 'the session has not ended: end it first' },
  payload_too_large: { status: 413, message: 'request body too large' },
  concurrency_limit: { status: 429, message: 'concurrent session limit reached' },
  rate_limited: { status: 429, message: "too many requests for this organization's rate: retry after the time given in Retry-After" },
  limit_reached: {
    status: 409,
    message: 'this organization has as many as it may: delete some, or ask the operator to raise the limit',
  },
  carrier_error: { status: 502, message: 'the carrier rejected the request' },
  carrier_lookup_failed: {
    status: 502,
    message:
      "the carrier account's phone numbers could not be read: try again, or ask the operator to check the organization's " +
      'carrier credentials (PUT /admin/v1/organizations/{id}/carrier)',
  },
  carrier_rejected: { status: 400, message: 'the carrier rejected the call' },
  carrier_auth_failed: {
    status: 502,
    message: 'the carrier refused the stored credentials: check the account sid and auth token (PUT /admin/v1/organizations/{id}/carrier)',
  },
  carrier_rate_limited: { status: 503, message: 'the carrier is rate limiting calls: retry later' },
  carrier_unavailable: { status: 502, message: 'the carrier API is unavailable' },
  carrier_timeout: { status: 504, message: 'the carrier API did not answer in time; the call may or may not have been placed' },
  tunnel_exists: { status: 409, message: 'another tunnel is connected for this agent: stop it first' },
  tunnel_limit: { status: 429, message: 'this organization has the most tunnels it may have open' },
  tunnel_busy: { status: 503, message: 'the tunnel has too many requests in flight' },
  tunnel_unavailable: { status: 502, message: 'no tunnel is connected at this address' },
  tunnel_local_error: { status: 502, message: "the tunnel's local server did not answer" },
  transfer_leg_unreachable: { status: 503, message: 'the replica running this transfer cannot be reached: retry later' },
  invalid_transfer_target: { status: 400, message: 'invalid transfer target' },
  transfer_not_supported: { status: 400, message: 'this session cannot be transferred: only phone calls can' },
  transfer_failed: { status: 502, message: 'the carrier could not transfer the call' },
  invalid_dtmf_digits: { status: 400, message: 'invalid DTMF digits' },
  dtmf_not_supported: { status: 400, message: 'this session has no audio to play keypad tones into' },
  outbound_queue_full: {
    status: 503,
    message: 'too many outbound calls are waiting for the carrier account rate: retry after the time given in Retry-After',
  },
  machine_detection_not_supported: {
    status: 400,
    message: 'machine_detection applies to outbound phone calls (initiate_outbound), not to browser sessions',
  },
  shutting_down: { status: 503, message: 'the gateway is shutting down' },
  database_unavailable: { status: 503, message: 'database unavailable' },
  metrics_unavailable: { status: 503, message: 'the metrics of every worker could not be gathered: try again' },
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
  /** Seconds a client should wait before retrying (sent as `Retry-After`), for errors that pass with time. */
  readonly retryAfterSeconds: number | undefined

  constructor(code: ErrorCode, message?: string, options?: { details?: string[]; cause?: unknown; retryAfterSeconds?: number }) {
    super(message ?? ERRORS[code].message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'VoxgateError'
    this.code = code
    this.status = ERRORS[code].status
    this.details = options?.details
    this.retryAfterSeconds = options?.retryAfterSeconds
  }
}

/** Builds a registered error; `message` overrides the registry's default text. */
export function voxError(
  code: ErrorCode,
  message?: string,
  options?: { details?: string[]; cause?: unknown; retryAfterSeconds?: number },
): VoxgateError {
  return new VoxgateError(code, message, options)
}

/** True when `e` is a registered error. */
export function isVoxgateError(e: unknown): e is VoxgateError {
  return e instanceof VoxgateError
}
