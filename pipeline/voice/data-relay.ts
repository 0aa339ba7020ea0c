import type { AgentContext, AgentStep } from '../agent/agent-step.js'
import type { PipelineLogger } from '../runtime/logger.js'
import type { PipelineEvent } from './pipeline-io.js'

/** Longest speech kept from one data reply; a backend that sends more is cut short (the reply limit is 1 MiB). */
export const MAX_DATA_SPEECH_CHARS = 10_000

/** `more` after `speech`, a space between them unless one is there already, cut at `MAX_DATA_SPEECH_CHARS`. */
export function joinSpeech(speech: string, more: string): string {
  const sep = speech === '' || /\s$/.test(speech) || /^\s/.test(more) ? '' : ' '
  return (speech + sep + more).slice(0, MAX_DATA_SPEECH_CHARS)
}

/** Where a data reply goes: `response.data` to the client as it arrives, speech once the reply is complete. */
export interface DataRelayOutput {
  emit(e: PipelineEvent): void
  /** The reply's `response.tts` text (joined), or its `response.hangup` farewell when `hangup`. */
  speak(text: string, hangup: boolean): void
  logger: PipelineLogger
  signal: AbortSignal
}

/**
 * Relays client data (or a DTMF digit) to the agent as a `data` request, beside the current turn and without
 * touching it; `response.data` in the reply goes back to the client under `turnId`. Text to speak in the reply
 * (`response.tts`, `response.hangup`) is handed to `speak` once the reply is complete: a data reply is a plain
 * JSON answer, so there is nothing to gain by speaking it piecemeal.
 */
export async function relayData(
  agent: AgentStep,
  context: AgentContext,
  turnId: string,
  data: unknown,
  out: DataRelayOutput,
): Promise<void> {
  let speech = ''
  let hangup = false
  try {
    for await (const e of agent.respond({ kind: 'data', turnId, data }, context, { signal: out.signal })) {
      if (e.type === 'data') out.emit({ type: 'data', turnId, content: e.content })
      else if (e.type === 'recording') out.emit({ type: 'recording', turnId, action: e.action })
      else if (e.type === 'dnc') out.emit({ type: 'dnc', turnId })
      else if (e.type === 'tts' || e.type === 'hangup') {
        hangup ||= e.type === 'hangup'
        speech = joinSpeech(speech, e.text)
      } else if (e.type === 'error') out.logger.warn({ code: e.code }, `data event failed: ${e.message}`)
    }
  } catch (err) {
    if (!out.signal.aborted) out.logger.error({ err }, 'data relay failed')
    return
  }
  if (!out.signal.aborted && (hangup || speech.trim() !== '')) out.speak(speech.trim(), hangup)
}
