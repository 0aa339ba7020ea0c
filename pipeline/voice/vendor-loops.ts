/**
 * A pipeline's two vendor loops: the STT's events into turn taking (a turn the recognizer lost goes to the
 * fallback), the TTS's events into the replies (when the TTS ends for good, an open turn can only finish
 * text-wise). And when the agent wants speech recognized but the gateway has no recognizer, one notice that names
 * the variables that would configure one.
 */
import type { PipelineLogger } from '../runtime/logger.js'
import { pump } from '../runtime/pump.js'
import type { SttStream } from '../vendors/stt/stt-stream.js'
import type { TtsStream } from '../vendors/tts/tts-stream.js'
import { sttSetupVariables } from '../vendors/open-vendor.js'
import type { Replies } from './replies.js'
import type { TurnTaking } from './turn-taking.js'

/** What the loops feed and are told by. */
export interface VendorLoops {
  readonly stt: SttStream | undefined
  readonly tts: TtsStream | undefined
  /** The transport carries audio (a text-only one needs neither notice nor TTS). */
  readonly audio: { readonly output: unknown } | undefined
  /** The agent's plugins name a recognizer. */
  readonly wantsStt: boolean
  readonly turns: TurnTaking
  readonly replies: Replies
  readonly closed: () => boolean
  readonly logger: PipelineLogger
  readonly notice: (code: string, message: string) => void
  /** The recognizer lost a turn; `cause` is its error code and vendor status, never a body. */
  readonly sttTurnFailed: (cause: string) => void
}

/** Starts both loops (and the notice, when due). */
export function startVendorLoops(v: VendorLoops): void {
  if (v.audio !== undefined && v.stt === undefined && v.wantsStt) {
    v.notice(
      'stt_not_configured',
      `speech recognition is not configured on this gateway (set ${sttSetupVariables().join(' or ')}): send text instead`,
    )
  }
  if (v.stt !== undefined)
    void pump(
      v.stt,
      (e) => {
        v.turns.onSttEvent(e)
        if (e.type === 'error' && e.turnFailed) v.sttTurnFailed(`${e.code}${e.vendorCode === undefined ? '' : ` ${e.vendorCode}`}`)
      },
      v.closed,
      v.logger,
      'speech recognition',
    )
  if (v.tts !== undefined && v.audio?.output !== undefined)
    void pump(v.tts, (e) => v.replies.onTtsEvent(e), v.closed, v.logger, 'speech synthesis').then(() => v.replies.ttsEnded())
}
