import type { EndReason } from '../../core/end-reason.js'
import type { PipelineInput } from '../../pipeline/index.js'

/**
 * The narrow view of a connected session that a transport (browser socket, carrier media stream) drives:
 * `CallSession` implements it, and transport tests implement it with a fake.
 */
export interface SessionPort {
  readonly id: string
  readonly isEnded: boolean
  /** The running pipeline's input; absent while the session runs without one (frames are then dropped). */
  readonly input?: PipelineInput
  /** Ends the session (the transport decided: a protocol error, a hangup). */
  end(reason: EndReason): Promise<void>
  /** The transport's socket closed by itself; the session ends without telling the transport again. */
  transportClosed(reason?: EndReason): Promise<void>
}
