/** A turn's latency stages as bars on one time axis shared by every turn of the session. */
import { h } from './dom.js'
import { turnNote } from './turn-notes.js'
import type { LatencyStage, TranscriptEntry } from './types.js'

/** Stage colours, in pipeline order (user_speech_end is the origin and has no bar). */
const COLORS: Record<string, string> = {
  transcript_final: '#7c8cf8',
  webhook_sent: '#4aa3df',
  reply_first_byte: '#36b37e',
  reply_first_text: '#8bc34a',
  tts_request: '#f5a623',
  tts_first_audio: '#f0784a',
  first_frame_out: '#e05d9c',
  first_audio_heard: '#9b59b6',
}
const FALLBACK = '#9aa3b5'

/** Human names of the stages (the API's names stay in data attributes and tooltips). */
const LABELS: Record<string, string> = {
  user_speech_end: 'speech end',
  transcript_final: 'final transcript',
  webhook_sent: 'webhook sent',
  reply_first_byte: 'reply first byte',
  reply_first_text: 'reply first text',
  tts_request: 'TTS request',
  tts_first_audio: 'TTS first audio',
  first_frame_out: 'first audio sent',
  first_audio_heard: 'first audio heard',
}

/** A round axis end at or above `ms` (100, 200, 250, 500, 1000, … ms). */
export function axisEnd(ms: number): number {
  const steps = [1, 2, 2.5, 5]
  for (let p = 10; ; p *= 10) {
    for (const s of steps) if (s * p >= ms) return s * p
  }
}

/** The widest turn of the session, which sets the shared axis. */
export function sessionAxis(transcript: TranscriptEntry[]): number {
  let max = 0
  for (const t of transcript) for (const s of t.latency_breakdown?.stages ?? []) max = Math.max(max, s.at_ms)
  return axisEnd(Math.max(max, 100))
}

/** The axis ticks row (0, ¼, ½, ¾, end). */
export function axisRow(end: number): HTMLElement {
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) =>
    h('span', { class: 'tick', style: `left:${f * 100}%` }, f === 1 ? `${Math.round(end * f)} ms` : `${Math.round(end * f)}`),
  )
  return h('div', { class: 'wf-axis' }, ...ticks)
}

function bar(stage: LatencyStage, end: number): HTMLElement {
  const start = stage.at_ms - stage.duration_ms
  const label = LABELS[stage.name] ?? stage.name
  const el = h(
    'div',
    {
      class: 'wf-bar',
      'data-stage': stage.name,
      'data-at-ms': stage.at_ms,
      'data-duration-ms': stage.duration_ms,
      title: `${label}: +${stage.duration_ms} ms (at ${stage.at_ms} ms after the end of speech)`,
      style: `left:${(start / end) * 100}%;width:${Math.max((stage.duration_ms / end) * 100, 0.4)}%;background:${COLORS[stage.name] ?? FALLBACK}`,
    },
    stage.duration_ms / end > 0.09 ? `${stage.duration_ms}` : '',
  )
  return el
}

/** One turn's waterfall: the stage bars and the turn's total; a failed turn's cause and wait above any bars. */
export function turnWaterfall(entry: TranscriptEntry, index: number, end: number): HTMLElement {
  // The end of speech is the origin (0 ms): every other stage is a bar.
  const stages = (entry.latency_breakdown?.stages ?? []).filter((s) => s.name !== 'user_speech_end')
  const note = turnNote(entry)
  const failure = entry.failure ?? null
  if (note !== null && (note.kind === 'unmeasured' || stages.length === 0)) {
    return h(
      'div',
      { class: `wf-turn empty-turn${note.kind === 'failed' ? ' failed-turn' : ''}`, 'data-turn': index, title: note.text },
      noteBlock(note, failure?.cause),
    )
  }
  const grid = [0.25, 0.5, 0.75].map((f) => h('span', { class: 'wf-grid', style: `left:${f * 100}%` }))
  return h(
    'div',
    {
      class: `wf-turn${note !== null ? ' failed-turn' : ''}`,
      'data-turn': index,
      'data-latency-ms': entry.latency_ms ?? '',
    },
    note !== null && noteBlock(note, failure?.cause),
    h('div', { class: 'wf-track' }, ...grid, ...stages.map((s) => bar(s, end))),
    h('div', { class: 'wf-total' }, entry.latency_ms === null ? '—' : `${Math.round(entry.latency_ms)} ms`),
  )
}

/** A turn note: a failed turn's cause and wait (marked), or why nothing was measured (muted). */
function noteBlock(note: NonNullable<ReturnType<typeof turnNote>>, cause: string | undefined): HTMLElement {
  if (note.kind === 'unmeasured') return h('span', { class: 'muted small turn-note' }, note.cause)
  return h(
    'div',
    { class: 'turn-failure', 'data-cause': cause, role: 'note' },
    h('div', { class: 'failure-cause' }, h('b', {}, 'Failed: '), note.cause),
    h('div', { class: 'failure-wait' }, note.waited),
  )
}

/** The colour key. */
export function legend(): HTMLElement {
  return h(
    'div',
    { class: 'wf-legend' },
    ...Object.entries(COLORS).map(([name, color]) =>
      h('span', { class: 'wf-key' }, h('i', { style: `background:${color}` }), LABELS[name] ?? name),
    ),
  )
}
