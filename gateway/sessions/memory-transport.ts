import type { EndReason, SessionTransport } from './call-session.js'

/**
 * A transport with no wire: drives a CallSession from code (tests, benchmarks, tools). It records what the
 * session asked of it.
 */
export class MemoryTransport implements SessionTransport {
  readonly kind = 'test' as const
  /** Reasons the session closed this transport with (at most one entry). */
  readonly closes: EndReason[] = []
  close(reason: EndReason): void {
    this.closes.push(reason)
  }
}
