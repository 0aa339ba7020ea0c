/** A session's warm transfers in the console: each attempt's human, when they answered and were connected, or why not. */
import { formatTime, h } from './dom.js'
import type { SessionDetails } from './types.js'

type Transfer = SessionDetails['transfers'][number]

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

/** One attempt as a line of steps, the outcome last. */
export function transferSteps(t: Transfer): string[] {
  const steps = [`started ${formatTime(t.started_at)}`]
  if (t.answered_after_ms !== undefined) steps.push(`answered after ${seconds(t.answered_after_ms)}`)
  if (t.connected_after_ms !== undefined) steps.push(`connected after ${seconds(t.connected_after_ms)}`)
  if (t.failed_reason !== undefined) {
    const after = t.failed_after_ms === undefined ? '' : ` after ${seconds(t.failed_after_ms)}`
    steps.push(`failed${after}: ${t.failed_reason}${t.failed_in === undefined ? '' : ` (${t.failed_in})`}`)
  } else if (t.connected_after_ms === undefined) steps.push('under way')
  return steps
}

/** The card of a session's transfers; empty (hidden) when it made none. */
export function renderTransfers(card: HTMLElement, d: SessionDetails): void {
  card.hidden = d.transfers.length === 0
  card.replaceChildren(
    h('h3', {}, 'Transfers'),
    ...d.transfers.map((t, i) =>
      h(
        'div',
        { class: t.failed_reason === undefined ? 'transfer' : 'transfer failed', 'data-transfer': i },
        h('b', {}, `Warm transfer to ${t.to}`),
        ' ',
        h('span', { class: 'muted small' }, transferSteps(t).join(' · ')),
        ...(t.transcript ?? []).map((line) =>
          h(
            'div',
            { class: `bubble ${line.speaker === 'caller' ? 'user' : 'agent'}` },
            h('b', {}, line.speaker === 'caller' ? 'Caller ' : 'Human '),
            line.text,
          ),
        ),
      ),
    ),
  )
}
