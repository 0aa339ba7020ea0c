import type { AgentContext, AgentStep } from '../agent/agent-step.js'
import type { PipelineLogger } from '../runtime/logger.js'
import type { PipelineEvent } from './pipeline-io.js'

/**
 * Relays client data (or a DTMF digit) to the agent as a `data` request, beside the current turn and without
 * touching it; `response.data` in the reply goes back to the client under `turnId`.
 */
export async function relayData(
  agent: AgentStep,
  context: AgentContext,
  turnId: string,
  data: unknown,
  out: { emit(e: PipelineEvent): void; logger: PipelineLogger; signal: AbortSignal },
): Promise<void> {
  try {
    for await (const e of agent.respond({ kind: 'data', turnId, data }, context, { signal: out.signal })) {
      if (e.type === 'data') out.emit({ type: 'data', turnId, content: e.content })
      else if (e.type === 'error') out.logger.warn({ code: e.code }, `data event failed: ${e.message}`)
    }
  } catch (err) {
    if (!out.signal.aborted) out.logger.error({ err }, 'data relay failed')
  }
}
