import type { Operation } from './operation.js'
import { V1 } from './operation.js'
import { createCampaignSchema } from '../routes/campaign-views.js'
import { addDncSchema } from '../routes/do-not-call.js'

const campaign = (path: string) => `/v1/campaigns/:campaign_id${path}`

/** Outbound campaigns and the do-not-call list. */
export const CAMPAIGN_OPERATIONS: Operation[] = [
  {
    method: 'post',
    path: '/v1/campaigns',
    tag: 'campaigns',
    summary:
      "Create an outbound campaign (a draft): agent, caller id, calling window in each callee's local time, retry policy per outcome, concurrency",
    auth: 'api_key',
    body: createCampaignSchema,
    ok: { status: 201, description: 'the campaign' },
    errors: [400],
  },
  {
    method: 'get',
    path: '/v1/campaigns',
    tag: 'campaigns',
    summary: "The organization's campaigns, newest first (at most 200)",
    auth: 'api_key',
    ok: { status: 200, description: '`{ campaigns }`' },
    errors: [400],
  },
  {
    method: 'get',
    path: campaign(''),
    tag: 'campaigns',
    summary: 'One campaign with its counts (contacts by state, dispositions, attempt outcomes)',
    auth: 'api_key',
    ok: { status: 200, description: 'the campaign and `counts`' },
    errors: V1,
  },
  {
    method: 'get',
    path: campaign('/progress'),
    tag: 'campaigns',
    summary:
      'Progress: dialled, reached, machines, failed, remaining, in progress, and when the window next opens for someone still to call',
    auth: 'api_key',
    ok: { status: 200, description: 'the progress' },
    errors: V1,
  },
  ...(['start', 'pause', 'resume', 'cancel'] as const).map(
    (action): Operation => ({
      method: 'post',
      path: campaign(`/${action}`),
      tag: 'campaigns',
      summary: {
        start: 'Start a draft campaign: the dialers begin calling its contacts inside their windows',
        pause: 'Pause a running campaign: nobody new is dialled; calls in progress finish',
        resume: 'Resume a paused campaign',
        cancel: 'Cancel a campaign: contacts not yet on a call end `canceled`; calls in progress finish',
      }[action],
      auth: 'api_key',
      ok: { status: 200, description: 'the campaign in its new state' },
      errors: [400, 404, 409],
    }),
  ),
  {
    method: 'post',
    path: campaign('/contacts'),
    tag: 'campaigns',
    summary:
      'Add contacts: JSON `{ contacts: [{ phone_number, timezone?, custom_metadata? }] }` or `text/csv` with a header row; bad rows are reported per row',
    auth: 'api_key',
    ok: { status: 200, description: '`{ received, added, rejected, errors: [{ row, phone_number, error }] }`' },
    errors: [400, 404, 409, 413, 415],
  },
  {
    method: 'get',
    path: campaign('/contacts'),
    tag: 'campaigns',
    summary: 'A page of contacts in upload order with status, disposition and each attempt (`after`, `limit` up to 500, `status`)',
    auth: 'api_key',
    ok: { status: 200, description: '`{ contacts, next_after }`' },
    errors: V1,
  },
  {
    method: 'get',
    path: campaign('/export'),
    tag: 'campaigns',
    summary: 'Every contact and its result as CSV',
    auth: 'api_key',
    ok: { status: 200, description: 'the CSV', contentType: 'text/csv' },
    errors: V1,
  },
  {
    method: 'post',
    path: '/v1/dnc',
    tag: 'dnc',
    summary: 'Add numbers to the do-not-call list: JSON `{ phone_numbers }` or `text/csv` (first column); bad rows are reported per row',
    auth: 'api_key',
    body: addDncSchema,
    ok: { status: 200, description: '`{ received, added, already_listed, rejected, errors }`' },
    errors: [400, 413, 415],
  },
  {
    method: 'get',
    path: '/v1/dnc/:phone_number',
    tag: 'dnc',
    summary: 'Whether a number is on the do-not-call list, since when and from where',
    auth: 'api_key',
    ok: { status: 200, description: '`{ phone_number, listed, source?, added_at? }`' },
    errors: [400],
  },
  {
    method: 'delete',
    path: '/v1/dnc/:phone_number',
    tag: 'dnc',
    summary: 'Remove a number from the do-not-call list',
    auth: 'api_key',
    ok: { status: 200, description: '`{ phone_number, removed }`' },
    errors: [400],
  },
]
