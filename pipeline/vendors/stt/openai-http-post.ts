import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'

/** The answer to a {@link postToSpeechServer}: its status, content type, and body as it streams in. */
export interface SpeechServerAnswer {
  status: number
  contentType: string
  /** Async-iterable Buffers; reading stops (and the connection is dropped) when the signal aborts. */
  body: IncomingMessage
}

/**
 * Idle connections are kept 4 s, under the 5 s after which uvicorn (the Python servers) and whisper-server close
 * theirs, so a request rarely goes out on a connection the server is closing (fetch's default is the same 4 s).
 */
const IDLE_MS = 4000
const agents = {
  'http:': new HttpAgent({ keepAlive: true, timeout: IDLE_MS }),
  'https:': new HttpsAgent({ keepAlive: true, timeout: IDLE_MS }),
}

/**
 * One `POST` to a speech server through node:http (keep-alive connections) rather than fetch: per request, fetch's
 * WHATWG layers (Request, body extraction, web streams) cost ~1 ms more CPU and latency on loopback than the plain
 * request (0.5 vs 1.5 ms per request measured side by side), and that was most of what a turn added on top of the
 * server's own time. The body may be given in pieces (a WAV header, its samples, the form around them), written
 * without joining them. No redirect is followed and no compression is asked for. A kept-alive connection that the
 * server closed as the request went out is retried once on a new one (the request had no effect). The signal aborts
 * the request and its body. Rejects with the connection's error (ECONNREFUSED, ...).
 */
export async function postToSpeechServer(
  url: string,
  headers: Record<string, string>,
  body: Buffer | readonly Buffer[],
  signal: AbortSignal,
): Promise<SpeechServerAnswer> {
  const target = new URL(url)
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error(`unsupported protocol ${target.protocol}`)
  const pieces = Buffer.isBuffer(body) ? [body] : (body as readonly Buffer[])
  try {
    return await post(target, headers, pieces, signal)
  } catch (error) {
    if (!(error instanceof StaleConnectionError) || signal.aborted) throw error instanceof StaleConnectionError ? error.cause : error
    return post(target, headers, pieces, signal)
  }
}

/** A reused connection failed before any answer: the server had closed it. */
class StaleConnectionError extends Error {}

function post(target: URL, headers: Record<string, string>, pieces: readonly Buffer[], signal: AbortSignal): Promise<SpeechServerAnswer> {
  const https = target.protocol === 'https:'
  let length = 0
  for (const piece of pieces) length += piece.length
  return new Promise((resolve, reject) => {
    const options = {
      method: 'POST',
      headers: { ...headers, 'content-length': String(length) },
      agent: agents[https ? 'https:' : 'http:'],
      signal,
    }
    const request = (https ? httpsRequest : httpRequest)(target, options, (response) =>
      resolve({ status: response.statusCode ?? 0, contentType: String(response.headers['content-type'] ?? ''), body: response }),
    )
    // Later errors (the connection lost while the body streams) reach the body's reader; this only settles the start.
    request.on('error', (error: NodeJS.ErrnoException) => {
      const stale = request.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE')
      reject(stale ? new StaleConnectionError(error.message, { cause: error }) : error)
    })
    // Corked: the headers and every piece go to the socket in one write, none of them copied into one buffer.
    request.cork()
    for (const piece of pieces) request.write(piece)
    request.end()
  })
}
