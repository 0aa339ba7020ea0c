/**
 * Outbound campaigns: each campaign's progress (dialled, reached, machines, failed, remaining, when the window next
 * opens) with pause and resume, and one campaign's contacts with every attempt. Refreshed every two seconds.
 */
import { ApiError, type ConsoleApi } from './api.js'
import { formatTime, h, replace } from './dom.js'
import { every } from './every.js'

interface Campaign {
  id: string
  name: string
  agent_id: string
  status: string
  from_phone_number: string
  max_concurrency: number
  calling_window: { days: string[]; start: string; end: string }
  default_timezone: string
}

interface Progress {
  status: string
  contacts: number
  dialled: number
  reached: number
  machines: number
  failed: number
  dnc: number
  in_progress: number
  remaining: number
  attempts: number
  next_window_at: string | null
}

interface Attempt {
  attempt: number
  session_id: string
  outcome: string
  started_at: string
}

interface Contact {
  id: string
  row: number
  phone_number: string
  timezone: string
  status: string
  disposition: string | null
  attempts: number
  next_attempt_at: string | null
  history: Attempt[]
}

const STATUS_CLASS: Record<string, string> = { running: 'live', completed: 'ok', canceled: 'bad', paused: 'warn', draft: 'warn' }

function pill(status: string): HTMLElement {
  return h('span', { class: `pill ${STATUS_CLASS[status] ?? ''}`, 'data-status': status }, status)
}

/** Pause or resume, whichever the campaign's state allows (nothing for a finished one). */
function moveButton(api: ConsoleApi, c: { id: string; status: string }, note: HTMLElement, after: () => Promise<void>): HTMLElement | null {
  const action = c.status === 'running' ? 'pause' : c.status === 'paused' ? 'resume' : undefined
  if (action === undefined) return null
  const button = h(
    'button',
    { type: 'button', class: `campaign-${action}`, 'data-campaign-id': c.id },
    action === 'pause' ? 'Pause' : 'Resume',
  )
  button.addEventListener('click', async () => {
    button.disabled = true
    try {
      await api.v1('POST', `/v1/campaigns/${encodeURIComponent(c.id)}/${action}`)
      await after()
    } catch (e) {
      note.textContent = e instanceof ApiError ? e.message : String(e)
      button.disabled = false
    }
  })
  return button
}

function progressCells(p: Progress): HTMLElement[] {
  return [
    h('td', { class: 'dialled' }, `${p.dialled} / ${p.contacts}`),
    h('td', { class: 'reached' }, p.reached),
    h('td', { class: 'machines' }, p.machines),
    h('td', { class: 'failed' }, p.failed),
    h('td', { class: 'remaining' }, p.remaining),
    h('td', { class: 'next-window' }, p.remaining === 0 ? '—' : formatTime(p.next_window_at)),
  ]
}

const PROGRESS_HEAD = ['Dialled', 'Reached', 'Machines', 'Failed', 'Remaining', 'Next window']

/** The list of campaigns with their progress. */
export function campaignsView(el: HTMLElement, api: ConsoleApi): () => void {
  const note = h('p', { class: 'small error', role: 'status' })
  const table = h('div', {})
  replace(el, h('h1', {}, 'Campaigns'), note, table)
  const load = async (signal?: AbortSignal): Promise<void> => {
    const { campaigns } = await api.v1<{ campaigns: Campaign[] }>('GET', '/v1/campaigns', undefined, signal)
    if (campaigns.length === 0) {
      replace(table, h('div', { class: 'empty', id: 'campaigns-empty' }, 'No campaigns yet: create one with POST /v1/campaigns.'))
      return
    }
    const progress = await Promise.all(
      campaigns.map((c) => api.v1<Progress>('GET', `/v1/campaigns/${encodeURIComponent(c.id)}/progress`, undefined, signal)),
    )
    const rows = campaigns.map((c, i) =>
      h(
        'tr',
        { 'data-campaign-id': c.id },
        h('td', {}, h('a', { href: `#/campaign/${encodeURIComponent(c.id)}` }, c.name)),
        h('td', {}, pill(c.status)),
        ...progressCells(progress[i] as Progress),
        h(
          'td',
          {},
          moveButton(api, c, note, () => load()),
        ),
      ),
    )
    replace(
      table,
      h(
        'table',
        { id: 'campaigns' },
        h('thead', {}, h('tr', {}, ...['Campaign', 'Status', ...PROGRESS_HEAD, ''].map((x) => h('th', {}, x)))),
        h('tbody', {}, ...rows),
      ),
    )
  }
  return every(2000, load)
}

/** One campaign: its progress, pause/resume, and its contacts (the first 200) with each attempt. */
export function campaignView(el: HTMLElement, api: ConsoleApi, params: string[]): () => void {
  const id = params[0] ?? ''
  const base = `/v1/campaigns/${encodeURIComponent(id)}`
  const note = h('p', { class: 'small error', role: 'status' })
  const head = h('div', {})
  const contacts = h('div', {})
  replace(el, h('p', {}, h('a', { href: '#/campaigns' }, '← Campaigns')), head, note, contacts)
  const load = async (signal?: AbortSignal): Promise<void> => {
    const [c, p, list] = await Promise.all([
      api.v1<Campaign>('GET', base, undefined, signal),
      api.v1<Progress>('GET', `${base}/progress`, undefined, signal),
      api.v1<{ contacts: Contact[] }>('GET', `${base}/contacts?limit=200`, undefined, signal),
    ])
    const w = c.calling_window
    replace(
      head,
      h('h1', {}, c.name, ' ', pill(c.status)),
      h(
        'p',
        { class: 'muted small' },
        `From ${c.from_phone_number} · ${w.days.join(', ')} ${w.start}–${w.end} callee's local time (default ${c.default_timezone}) · `,
        `at most ${c.max_concurrency} calls at once · ${p.attempts} attempts · ${p.in_progress} on a call now`,
      ),
      h(
        'table',
        { id: 'campaign-progress' },
        h('thead', {}, h('tr', {}, ...PROGRESS_HEAD.map((x) => h('th', {}, x)))),
        h('tbody', {}, h('tr', {}, ...progressCells(p))),
      ),
      moveButton(api, c, note, () => load()),
    )
    const rows = list.contacts.map((x) =>
      h(
        'tr',
        { 'data-contact-id': x.id, 'data-status': x.status },
        h('td', {}, x.row),
        h('td', { class: 'mono' }, x.phone_number),
        h('td', { class: 'small' }, x.timezone),
        h('td', {}, x.disposition ?? x.status),
        h(
          'td',
          { class: 'history small' },
          ...x.history.map((a, i) =>
            h(
              'span',
              {},
              i > 0 ? ' → ' : '',
              h(
                'a',
                {
                  href: `#/session/${encodeURIComponent(c.agent_id)}/${encodeURIComponent(a.session_id)}`,
                  title: formatTime(a.started_at),
                },
                a.outcome,
              ),
            ),
          ),
          x.next_attempt_at !== null && x.attempts > 0 ? h('span', { class: 'muted' }, ` · next ${formatTime(x.next_attempt_at)}`) : null,
        ),
      ),
    )
    replace(
      contacts,
      h('h2', {}, 'Contacts'),
      h(
        'table',
        { id: 'campaign-contacts' },
        h('thead', {}, h('tr', {}, ...['#', 'Number', 'Time zone', 'Result', 'Attempts'].map((x) => h('th', {}, x)))),
        h('tbody', {}, ...rows),
      ),
    )
  }
  return every(2000, load)
}
