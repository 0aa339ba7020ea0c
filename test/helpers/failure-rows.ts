/**
 * The ways an agent's backend fails a turn, one row each, shared by the browser and the phone-call
 * end-to-end tests: what the backend does, the cause the session details must name, and how soon after the end of
 * the caller's turn the caller must hear the fallback (2 s after the failure is known; 3.5 s for a backend that
 * never answers).
 */
import { createServer, type AddressInfo } from 'node:net'
import type { BackendReply, BackendRequest } from '../fakes/backend/fake-backend.js'

/** The default fallback text (agent.webhook `fallback.messages`). */
export const DEFAULT_FALLBACK = "I'm sorry, I'm having trouble answering right now. Could you say that again?"

export interface FailureRow {
  name: string
  cause: string
  /** How the backend answers the failing turn; undefined: nothing listens (connection refused). */
  reply: ((request: BackendRequest) => BackendReply) | undefined
  /** Most ms from the end of the caller's turn to the first audio of the fallback. */
  boundMs: number
}

/** Stream steps are written after the SSE headers; the broken stream breaks 300 ms in. */
export const FAILURE_ROWS: FailureRow[] = [
  // The backend is on loopback, a private address: every connection failure there is connect_failed (no port scans).
  { name: 'connection refused', cause: 'connect_failed', reply: undefined, boundMs: 2_000 },
  { name: 'HTTP 500', cause: 'http_500', reply: () => ({ kind: 'status', status: 500, body: 'Internal Server Error' }), boundMs: 2_000 },
  {
    name: 'a body that is not an event stream',
    cause: 'invalid_stream',
    reply: () => ({ kind: 'json', body: '<html><body>502 Bad Gateway</body></html>', contentType: 'text/html' }),
    boundMs: 2_000,
  },
  {
    name: 'a stream that breaks',
    cause: 'stream_broken',
    reply: () => ({ kind: 'sse', steps: [{ comment: 'thinking' }, { delayMs: 300 }, { destroy: true }] }),
    boundMs: 2_300,
  },
  {
    name: 'a reply with nothing to speak',
    cause: 'empty_reply',
    reply: (req) => ({ kind: 'sse', steps: [{ data: { type: 'response.end', turn_id: req.json.turn_id } }] }),
    boundMs: 2_000,
  },
  { name: 'a backend that never answers', cause: 'timeout', reply: () => ({ kind: 'hang' }), boundMs: 3_500 },
]

/** A port nothing listens on (bound, then released): requests to it are refused. */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** A session's transcript entry for `userMessage`, from the session details. */
export function entryFor(details: { transcript?: { user_message: string | null }[] }, userMessage: string): any {
  return details.transcript?.find((e) => e.user_message === userMessage)
}
