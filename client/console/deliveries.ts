/** A session's lifecycle webhook deliveries, with a button that sends a failed one again. */
import { ApiError, type ConsoleApi } from './api.js'
import { formatTime, h, replace } from './dom.js'
import type { WebhookDelivery } from './types.js'

function statusPill(d: WebhookDelivery): HTMLElement {
  const cls = d.status === 'delivered' ? 'ok' : d.status === 'failed' ? 'bad' : 'warn'
  return h('span', { class: `pill ${cls}` }, d.status)
}

/** Renders the deliveries into `box`; `refresh` is called after a resend. */
export function renderDeliveries(
  box: HTMLElement,
  api: ConsoleApi,
  base: string,
  deliveries: WebhookDelivery[],
  refresh: () => Promise<void>,
): void {
  if (deliveries.length === 0) {
    replace(
      box,
      h('div', { class: 'empty', id: 'deliveries-empty' }, 'No lifecycle webhooks for this session (none configured, or none sent yet).'),
    )
    return
  }
  const rows = deliveries.map((d) => {
    const note = h('span', { class: 'small error' })
    const action =
      d.status === 'failed'
        ? h('button', { type: 'button', class: 'redeliver', 'data-delivery-id': d.id }, 'Send again')
        : h('span', { class: 'muted' }, '')
    action.addEventListener('click', async () => {
      if (!(action instanceof HTMLButtonElement)) return
      action.disabled = true
      action.textContent = 'Sending…'
      try {
        await api.v1('POST', `${base}/${encodeURIComponent(d.id)}/redeliver`)
        await refresh()
      } catch (e) {
        note.textContent = e instanceof ApiError ? e.message : String(e)
        action.disabled = false
        action.textContent = 'Send again'
      }
    })
    return h(
      'tr',
      { 'data-delivery-id': d.id, 'data-status': d.status },
      h('td', { class: 'mono' }, d.type),
      h('td', {}, statusPill(d)),
      h('td', { class: 'attempts' }, d.attempts),
      h('td', { class: 'response-status' }, d.response_status ?? d.error ?? '—'),
      h('td', {}, formatTime(d.last_attempt_at ?? d.created_at)),
      h('td', {}, action, note),
    )
  })
  replace(
    box,
    h(
      'table',
      { id: 'deliveries' },
      h('thead', {}, h('tr', {}, ...['Event', 'Status', 'Attempts', 'Response', 'Time', ''].map((t) => h('th', {}, t)))),
      h('tbody', {}, ...rows),
    ),
  )
}
