/**
 * Calls: live sessions (refreshed every second from the database, so any replica's calls show) and ended ones a
 * page at a time, both narrowed by the search and outcome in the URL hash.
 */
import { ApiError, type ConsoleApi } from './api.js'
import { every } from './every.js'
import {
  PAGE_SIZES,
  LIVE_LIMIT,
  callsHash,
  endedListPath,
  isFiltered,
  liveListPath,
  outcomeLabel,
  outcomes,
  parseCallsFilter,
  type CallsFilter,
  type Outcome,
} from './calls-filter.js'
import { formatDuration, formatTime, h, replace } from './dom.js'
import type { SessionListItem, SessionListPage } from './types.js'

/** How often the live list is read (the issue: a new call shows within a second). */
const LIVE_POLL_MS = 750
const RECENT_POLL_MS = 5_000

/** `+1 555… → +1 444…` for calls, `browser` otherwise. */
export function callParties(s: Pick<SessionListItem, 'channel' | 'from_phone_number' | 'to_phone_number' | 'direction'>): string {
  if (s.channel === 'browser') return 'Browser'
  return `${s.from_phone_number ?? '?'} → ${s.to_phone_number ?? '?'}`
}

function channelPill(s: SessionListItem): HTMLElement {
  const inOut = s.direction?.startsWith('outbound') ? 'out' : 'in'
  const label = s.channel === 'carrier' ? `Phone · ${inOut}` : s.channel === 'sip' ? `SIP · ${inOut}` : 'Browser'
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
    h(
      'td',
      { class: 'turns' },
      s.turns,
      s.failed_turns > 0 && ' ',
      s.failed_turns > 0 && h('span', { class: 'pill failed', title: 'turns that failed' }, `${s.failed_turns} failed`),
    ),
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

/** The search bar: typing changes nothing until Search (or Enter); then the hash, and so the view, follows. */
function searchBar(f: CallsFilter): HTMLElement {
  const input = h('input', {
    id: 'call-search',
    type: 'search',
    value: f.q,
    maxlength: 200,
    placeholder: 'Phone number, conversation or session id, agent',
    'aria-label': 'Search calls',
  })
  const outcome = h(
    'select',
    { id: 'outcome-filter', 'aria-label': 'Outcome' },
    ...outcomes().map((o) => h('option', { value: o, selected: o === f.outcome }, outcomeLabel(o))),
  )
  const size = h(
    'select',
    { id: 'page-size', 'aria-label': 'Calls per page' },
    ...PAGE_SIZES.map((n) => h('option', { value: n, selected: n === f.limit }, `${n} per page`)),
  )
  const go = (): void => {
    // A new search starts from the newest calls.
    location.hash = callsHash({ q: input.value.trim(), outcome: outcome.value as Outcome, limit: Number(size.value), cursor: undefined })
  }
  outcome.addEventListener('change', go)
  size.addEventListener('change', go)
  const form = h(
    'form',
    { class: 'card search-bar', id: 'call-search-form', role: 'search' },
    input,
    outcome,
    size,
    h('button', { type: 'submit', class: 'primary', id: 'search-submit' }, 'Search'),
    isFiltered(f) && h('a', { href: '#/sessions', id: 'search-clear', class: 'small' }, 'Clear'),
  )
  form.addEventListener('submit', (e) => {
    e.preventDefault()
    go()
  })
  return form
}

/** Links to the newest page (when on a later one) and the next (when there is one). */
function pager(f: CallsFilter, next: string | null): HTMLElement {
  return h(
    'div',
    { class: 'pager', id: 'pager' },
    f.cursor !== undefined ? h('a', { href: callsHash({ ...f, cursor: undefined }), id: 'newest-calls' }, '← Newest') : h('span', {}),
    next !== null ? h('a', { href: callsHash({ ...f, cursor: next }), id: 'older-calls' }, 'Older calls →') : h('span', {}),
  )
}

function showLoadError(box: HTMLElement, what: string, e: unknown): void {
  replace(box, h('p', { class: 'error', role: 'alert' }, `Could not load ${what}: ${e instanceof ApiError ? e.message : String(e)}`))
}

export function sessionsView(el: HTMLElement, api: ConsoleApi, _params: string[], query: URLSearchParams): () => void {
  const f = parseCallsFilter(query)
  const livePath = liveListPath(f)
  const endedPath = endedListPath(f)
  const liveBox = h('div', { id: 'live-box' })
  const recentBox = h('div', { id: 'recent-box' })
  const liveCount = h('span', { class: 'pill live', id: 'live-count' }, '0')
  const endedTitle = isFiltered(f) ? 'Ended calls matching' : 'Recent calls'
  el.append(
    h(
      'div',
      { class: 'stack' },
      searchBar(f),
      livePath !== undefined && h('h2', {}, 'Live now ', liveCount),
      livePath !== undefined && liveBox,
      endedPath !== undefined && h('h2', {}, f.cursor === undefined ? endedTitle : `${endedTitle} (older)`),
      endedPath !== undefined && recentBox,
    ),
  )
  const stopLive =
    livePath === undefined
      ? () => undefined
      : every(LIVE_POLL_MS, async (signal) => {
          try {
            const { sessions, next_cursor } = await api.v1<SessionListPage>('GET', livePath, undefined, signal)
            // More live calls than one read shows: the count says so rather than understate.
            liveCount.textContent = next_cursor !== null ? `${LIVE_LIMIT}+` : String(sessions.length)
            const empty = isFiltered(f) ? 'No live call matches.' : 'No call is live. New calls appear here within a second.'
            replace(liveBox, table('live-sessions', sessions, true, empty))
          } catch (e) {
            if (!signal.aborted) showLoadError(liveBox, 'live calls', e)
          }
        })
  const stopRecent =
    endedPath === undefined
      ? () => undefined
      : every(RECENT_POLL_MS, async (signal) => {
          try {
            const page = await api.v1<SessionListPage>('GET', endedPath, undefined, signal)
            const empty = isFiltered(f) ? 'No ended call matches.' : 'No calls yet.'
            replace(recentBox, table('recent-sessions', page.sessions, false, empty), pager(f, page.next_cursor))
          } catch (e) {
            if (!signal.aborted) showLoadError(recentBox, 'calls', e)
          }
        })
  return () => {
    stopLive()
    stopRecent()
  }
}
