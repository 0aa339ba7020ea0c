/** One session: facts, transcript beside each turn's latency waterfall, the recording, and webhook deliveries. */
import type { ConsoleApi } from './api.js'
import { every } from './every.js'
import { formatDuration, formatTime, h, replace } from './dom.js'
import { renderDeliveries } from './deliveries.js'
import { renderTransfers } from './transfers.js'
import { axisRow, legend, sessionAxis, turnWaterfall } from './waterfall.js'
import type { AgentDetails, SessionDetails, TranscriptEntry, WebhookDeliveryList } from './types.js'
import { turnEndInWords } from './turn-end.js'

const LIVE_POLL_MS = 1_000
const DELIVERIES_POLL_MS = 2_000

function fact(label: string, value: string | number | null | undefined, id?: string): HTMLElement {
  return h('div', { class: 'fact' }, h('div', { class: 'fact-label' }, label), h('div', { class: 'fact-value', id }, value ?? '—'))
}

function transcriptCell(t: TranscriptEntry): HTMLElement {
  return h(
    'div',
    { class: 'turn-text' },
    h('div', { class: 'turn-time muted small' }, formatTime(t.timestamp)),
    t.user_message !== null && h('div', { class: 'bubble user' }, h('b', {}, 'Caller '), t.user_message),
    (t.turn_end ?? null) !== null &&
      h('div', { class: 'turn-end muted small', title: `turn_end: ${t.turn_end}` }, `Turn ended: ${turnEndInWords(t.turn_end ?? '')}`),
    t.assistant_message !== null && h('div', { class: 'bubble agent' }, h('b', {}, 'Agent '), t.assistant_message),
  )
}

function turnsTable(d: SessionDetails): HTMLElement {
  if (d.transcript.length === 0) return h('div', { class: 'empty' }, 'No turns yet.')
  const end = sessionAxis(d.transcript)
  return h(
    'div',
    { class: 'turns-grid', id: 'turns' },
    h('div', { class: 'turns-head' }, h('div', {}, h('h3', {}, 'Transcript')), h('div', {}, h('h3', {}, 'Latency per turn'), axisRow(end))),
    ...d.transcript.map((t, i) => {
      const failed = (t.failure ?? null) !== null
      return h(
        'div',
        { class: failed ? 'turn-row failed' : 'turn-row', 'data-turn': i, 'data-failed': failed },
        transcriptCell(t),
        h('div', { class: 'turn-wf' }, turnWaterfall(t, i, end)),
      )
    }),
    legend(),
  )
}

export function sessionView(el: HTMLElement, api: ConsoleApi, params: string[]): () => void {
  const [agentId = '', sessionId = ''] = params
  const base = `/v1/agents/${encodeURIComponent(agentId)}/sessions/${encodeURIComponent(sessionId)}`
  const head = h('div', { class: 'session-head' })
  const facts = h('div', { class: 'facts card' })
  const transfers = h('div', { class: 'card', id: 'transfers-box', hidden: true })
  const turns = h('div', { class: 'card', id: 'turns-box' })
  const recording = h('div', { class: 'card', id: 'recording-box' })
  const deliveries = h('div', { class: 'card', id: 'deliveries-box' })
  el.append(
    h(
      'div',
      { class: 'stack' },
      h('a', { href: '#/sessions', class: 'small' }, '← All calls'),
      head,
      facts,
      transfers,
      turns,
      h('div', { class: 'grid2' }, recording, deliveries),
    ),
  )
  let recordingShown = ''
  let blobUrl: string | undefined
  let lastTranscript = ''

  const showRecording = async (d: SessionDetails, signal: AbortSignal): Promise<void> => {
    if (recordingShown === d.recording_status) return
    recordingShown = d.recording_status
    const title = h('h3', {}, 'Recording')
    if (d.recording_status === 'completed') {
      replace(recording, title, h('p', { class: 'muted' }, 'Loading…'))
      const blob = await api.blob(`${base}/recording`, signal)
      blobUrl = URL.createObjectURL(blob)
      replace(
        recording,
        title,
        h('audio', { id: 'recording-player', controls: true, preload: 'metadata', src: blobUrl }),
        h('p', { class: 'muted small' }, 'Two channels: the caller on the left, the agent on the right.'),
      )
    } else if (d.recording_status === 'in_progress') {
      replace(recording, title, h('p', { class: 'muted' }, 'The recording is being made; it appears here when ready.'))
    } else {
      replace(recording, title, h('p', { class: 'muted', id: 'no-recording' }, 'No recording for this session.'))
    }
  }

  const render = (d: SessionDetails): void => {
    const live = d.status !== 'ended'
    const parties = d.from_phone_number !== null ? `${d.from_phone_number} → ${d.to_phone_number ?? '?'}` : 'Browser session'
    replace(
      head,
      h(
        'h1',
        {},
        parties,
        ' ',
        live
          ? h('span', { class: 'pill live', id: 'session-status' }, 'live')
          : h('span', { class: 'pill', id: 'session-status' }, d.end_reason ?? 'ended'),
      ),
      h('div', { class: 'muted mono small' }, d.session_id),
    )
    const duration = live && d.started_at !== null ? Date.now() - Date.parse(d.started_at) : d.duration_ms
    replace(
      facts,
      fact('Started', formatTime(d.started_at)),
      fact('Duration', formatDuration(duration)),
      fact('Turns', d.transcript.length),
      fact('Failed turns', d.transcript.filter((t) => (t.failure ?? null) !== null).length, 'failed-turns'),
      fact('Mean latency', d.latency_ms === null ? null : `${Math.round(d.latency_ms)} ms`),
      fact('Speech in', d.transcription_duration_seconds === null ? null : `${d.transcription_duration_seconds.toFixed(1)} s`),
      fact('Speech out', d.tts_duration_seconds === null ? null : `${d.tts_duration_seconds.toFixed(1)} s`),
      fact('Agent', agentName ?? d.agent_id),
    )
    renderTransfers(transfers, d)
    // Redrawn only when the turns change, so hovering a bar is not interrupted every second.
    const key = JSON.stringify(d.transcript)
    if (key !== lastTranscript) {
      lastTranscript = key
      replace(turns, turnsTable(d))
    }
  }

  let ended = false
  let agentName: string | undefined
  void api.v1<Pick<AgentDetails, 'name'>>('GET', `/v1/agents/${encodeURIComponent(agentId)}`).then(
    (a) => {
      agentName = a.name
    },
    () => undefined,
  )
  const stopDetails = every(LIVE_POLL_MS, async (signal) => {
    if (ended) return
    try {
      const d = await api.v1<SessionDetails>('GET', base, undefined, signal)
      render(d)
      ended = d.status === 'ended' && d.recording_status !== 'in_progress'
      await showRecording(d, signal)
    } catch (e) {
      if ((e as { status?: number }).status === 404) {
        ended = true
        replace(
          head,
          h('h1', {}, 'Session not found'),
          h('p', { class: 'muted', id: 'session-missing' }, 'No such session in this organization.'),
        )
      } else throw e
    }
  })
  const loadDeliveries = async (signal?: AbortSignal): Promise<void> => {
    const { deliveries: list } = await api.v1<WebhookDeliveryList>('GET', `${base}/webhook_deliveries`, undefined, signal)
    renderDeliveries(deliveries, api, `${base}/webhook_deliveries`, list, () => loadDeliveries())
    deliveries.prepend(h('h3', {}, 'Lifecycle webhooks'))
  }
  const stopDeliveries = every(DELIVERIES_POLL_MS, loadDeliveries)
  return () => {
    stopDetails()
    stopDeliveries()
    if (blobUrl !== undefined) URL.revokeObjectURL(blobUrl)
  }
}
