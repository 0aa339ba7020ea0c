import t from 'tap'
import { decodeBackendEvent } from '../../pipeline/agent/backend-event.js'
import type { AgentEvent, AgentStep } from '../../pipeline/agent/agent-step.js'
import { relayData } from '../../pipeline/voice/data-relay.js'
import type { PipelineEvent } from '../../pipeline/voice/pipeline-io.js'
import { silentLogger } from '../../pipeline/runtime/logger.js'

t.test('response.recording decodes pause and resume, in either shape; anything else is a bad event', async (t) => {
  t.same(decodeBackendEvent({ type: 'response.recording', action: 'pause', turn_id: 'a1' }, 'a1'), {
    ok: true,
    event: { type: 'recording', action: 'pause' },
  })
  t.same(decodeBackendEvent({ type: 'response.recording', content: { action: 'resume' }, turn_id: 'a1' }, 'a1'), {
    ok: true,
    event: { type: 'recording', action: 'resume' },
  })
  for (const bad of [{}, { action: 'stop' }, { content: 'pause' }]) {
    const r = decodeBackendEvent({ type: 'response.recording', turn_id: 'a1', ...bad }, 'a1')
    t.match(r, { ok: false, problem: /response\.recording needs "action"/ })
  }
  t.match(decodeBackendEvent({ type: 'response.recording', action: 'pause', turn_id: 'other' }, 'a1'), { ok: false })
})

t.test('a data reply may pause the recording: the command is passed on under the data turn', async (t) => {
  const agent: AgentStep = {
    handles: new Set(['data']),
    async *respond(): AsyncIterable<AgentEvent> {
      yield { type: 'recording', action: 'pause' }
      yield { type: 'end' }
    },
  }
  const events: PipelineEvent[] = []
  await relayData(
    agent,
    { sessionId: 's', conversationId: 'c', history: [] },
    'data-1',
    { step: 'card' },
    {
      emit: (e) => events.push(e),
      speak: () => undefined,
      logger: silentLogger,
      signal: new AbortController().signal,
    },
  )
  t.same(events, [{ type: 'recording', turnId: 'data-1', action: 'pause' }])
})
