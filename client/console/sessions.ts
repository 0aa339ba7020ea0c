/** Calls: live sessions (refreshed every second from the database, so any replica's calls show) and recent ones. */
import type { ConsoleApi } from './api.js'
import { every } from './app.js'
import { formatDuration, formatTime, h, replace } from './dom.js'
import type { SessionListItem } from './types.js'

/** How often the live list is read (the issue: a new call shows within a second). */
const LIVE_POLL_MS = 750
const RECENT_POLL_MS = 5_000

/** `+1 555… → +1 444…` for calls, `browser` otherwise. */
export function callParties(s: Pick<SessionListItem, 'channel' | 'from_phone_number' | 'to_phone_number' | 'direction'>): string {
  if (s.channel === 'browser') return 'Browser'
  return `${s.from_phone_number ?? '?'} → ${s.to_phone_number ?? '?'}`
}

function channelPill(s: SessionListItem): HTMLElement {
  const label = s.channel === 'carrier' ? (s.direction?.startsWith('outbound') ? 'Phone · out' : 'Phone · in') : 'Browser'
  return h('span', { class: 'pill' }, label)
}

function sessionHref(s: SessionListItem): string {
  return `#/session/${encodeURIComponent(s.agent_id)}/${encodeURIComponent(s.session_id)}`
}

function row(s: SessionListItem, live: boolean): HTMLTableRowElement {
  const duration = live && s.started_at !== null ? Date.now() - Date.parse(s.started_at) : s.duration_ms
  const tr = h(
    'tr',
    { class: 'clickable', 'data-session-id': s.session_id },
    h('td', {}, live ? h('span', { class: 'pill live' }, 'live') : h('span', { class: 'pill' }, s.end_reason ?? 'ended')),
    h('td', {}, channelPill(s)),
    h('td', { class: 'mono' }, callParties(s)),
    h('td', {}, s.agent_name),
    h('td', {}, formatTime(s.started_at)),
    h('td', { class: 'duration' }, formatDuration(duration)),
    h('td', { class: 'turns' }, s.turns),
    h('td', {}, s.latency_ms === null ? '—' : `${Math.round(s.latency_ms)} ms`),
  )
  tr.addEventListener('click', () => {
    location.hash = sessionHref(s)
  })
  return tr
}

function table(id: string, items: SessionListItem[], live: boolean, empty: string): HTMLElement {
  if (items.length === 0) return h('div', { id, class: 'card empty' }, empty)
  return h(
    'table',
    { id, class: 'card' },
    h(
      'thead',
      {},
      h('tr', {}, ...['', 'Channel', 'Numbers', 'Agent', 'Started', 'Duration', 'Turns', 'Mean latency'].map((t) => h('th', {}, t))),
    ),
    h('tbody', {}, ...items.map((s) => row(s, live))),
  )
}

export function sessionsView(el: HTMLElement, api: ConsoleApi): () => void {
  const liveBox = h('div', { id: 'live-box' })
  const recentBox = h('div', { id: 'recent-box' })
  const liveCount = h('span', { class: 'pill live', id: 'live-count' }, '0')
  el.append(h('div', { class: 'stack' }, h('h2', {}, 'Live now ', liveCount), liveBox, h('h2', {}, 'Recent calls'), recentBox))
  const stopLive = every(LIVE_POLL_MS, async (signal) => {
    const { sessions } = await api.v1<{ sessions: SessionListItem[] }>('GET', '/v1/sessions?status=live&limit=100', undefined, signal)
    liveCount.textContent = String(sessions.length)
    replace(liveBox, table('live-sessions', sessions, true, 'No call is live. New calls appear here within a second.'))
  })
  const stopRecent = every(RECENT_POLL_MS, async (signal) => {
    const { sessions } = await api.v1<{ sessions: SessionListItem[] }>('GET', '/v1/sessions?status=ended&limit=50', undefined, signal)
    replace(recentBox, table('recent-sessions', sessions, false, 'No calls yet.'))
  })
  return () => {
    stopLive()
    stopRecent()
  }
}
