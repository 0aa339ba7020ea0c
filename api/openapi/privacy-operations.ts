import type { Operation } from './operation.js'

/** The privacy control routes, additions to the SPEC. */
export const PRIVACY_OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: '/v1/agents/:agent_id/sessions/:session_id/recording/metadata',
    tag: 'sessions',
    summary:
      "The recording's privacy metadata (an addition): where the caller's redacted words were silenced and where the backend paused it",
    auth: 'api_key',
    ok: {
      status: 200,
      description:
        '`{ session_id, status, sample_rate, duration_ms, silenced: [{ from_ms, to_ms, kind }], paused: [{ from_ms, to_ms }], held: [{ kind, from_ms, to_ms }] }`, ms from the start of the file; `to_ms` null for a pause or hold that lasted to the end; `held` lists when the caller was on hold (`sip_hold`: the SIP peer held the call; `transfer_hold`: a warm transfer held the caller until the human answered)',
    },
    errors: [400, 404],
  },
  {
    method: 'delete',
    path: '/v1/agents/:agent_id/sessions/:session_id/data',
    tag: 'sessions',
    summary:
      "Purge what a finished session kept (an addition): its transcript's text, the transcripts in its recorded webhook deliveries, and its recording",
    auth: 'api_key',
    ok: { status: 200, description: '`{ session_id, transcript_turns, recording_deleted, webhook_deliveries }`: what was purged' },
    errors: [400, 404, 409, 503],
  },
]
