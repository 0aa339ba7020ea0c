/** Agents and their phone numbers: assign, unassign, set the webhook URL. */
import { ApiError, type ConsoleApi } from './api.js'
import { formatTime, h, replace } from './dom.js'
import type { Agent, AgentDetails, AgentList } from './types.js'

function webhookUrlOf(d: AgentDetails): string {
  return d.config.plugins?.find((p) => p.use === 'agent.webhook')?.options?.url ?? ''
}

function agentCard(api: ConsoleApi, agent: Agent, details: AgentDetails, reload: () => Promise<void>): HTMLElement {
  const status = h('p', { class: 'small error', role: 'status' })
  const fail = (e: unknown): void => {
    status.className = 'small error'
    status.textContent = e instanceof ApiError ? e.message : String(e)
  }
  const path = `/v1/agents/${encodeURIComponent(agent.id)}`

  const url = h('input', { class: 'webhook-url', value: webhookUrlOf(details), placeholder: 'https://your-backend.example/api/agent' })
  const saveUrl = h('button', { type: 'button', class: 'save-webhook' }, 'Save')
  saveUrl.addEventListener('click', async () => {
    try {
      await api.v1('POST', path, { webhook_url: url.value.trim() })
      status.className = 'small ok-text'
      status.textContent = 'Webhook URL saved.'
    } catch (e) {
      fail(e)
    }
  })

  const number = h('input', { class: 'phone-number', placeholder: '+15551234567' })
  const friendly = h('input', { class: 'friendly-name', placeholder: 'Label (optional)' })
  const assign = h('button', { type: 'button', class: 'assign-number' }, 'Assign')
  assign.addEventListener('click', async () => {
    const body: Record<string, string> = { phone_number: number.value.trim() }
    if (friendly.value.trim() !== '') body.friendly_name = friendly.value.trim()
    try {
      await api.v1('POST', `${path}/phone_numbers`, body)
      await reload()
    } catch (e) {
      fail(e)
    }
  })

  const numbers =
    agent.assigned_phone_numbers.length === 0
      ? h('p', { class: 'muted' }, 'No phone number yet.')
      : h(
          'table',
          { class: 'numbers' },
          h(
            'tbody',
            {},
            ...agent.assigned_phone_numbers.map((n) => {
              const unassign = h('button', { type: 'button', class: 'danger unassign', 'data-number': n.phone_number }, 'Unassign')
              unassign.addEventListener('click', async () => {
                try {
                  await api.v1('DELETE', `${path}/phone_numbers/${encodeURIComponent(n.phone_number)}`)
                  await reload()
                } catch (e) {
                  fail(e)
                }
              })
              return h(
                'tr',
                { 'data-number': n.phone_number },
                h('td', { class: 'mono' }, n.phone_number),
                h('td', {}, n.friendly_name ?? ''),
                h('td', { class: 'muted small' }, `since ${formatTime(n.assigned_at)}`),
                h('td', {}, unassign),
              )
            }),
          ),
        )

  return h(
    'div',
    { class: 'card agent', 'data-agent-id': agent.id },
    h('div', { class: 'agent-head' }, h('h2', {}, agent.name), h('span', { class: 'muted mono small' }, agent.id)),
    h('label', {}, 'Webhook URL (the customer backend)'),
    h('div', { class: 'inline' }, url, saveUrl),
    h('label', {}, 'Phone numbers'),
    numbers,
    h('div', { class: 'inline' }, number, friendly, assign),
    h(
      'p',
      { class: 'muted small' },
      "A number can be assigned when your carrier account owns it, or when the gateway's operator reserved it for your organization.",
    ),
    status,
  )
}

export function agentsView(el: HTMLElement, api: ConsoleApi): () => void {
  const list = h('div', { class: 'stack', id: 'agents' })
  el.append(h('h2', {}, 'Agents'), list)
  const abort = new AbortController()
  const load = async (): Promise<void> => {
    const { agents } = await api.v1<AgentList>('GET', '/v1/agents', undefined, abort.signal)
    const details = await Promise.all(
      agents.map((a) => api.v1<AgentDetails>('GET', `/v1/agents/${encodeURIComponent(a.id)}`, undefined, abort.signal)),
    )
    if (agents.length === 0)
      replace(list, h('div', { class: 'card empty' }, 'No agents yet: create one with POST /v1/agents or `voxgate init`.'))
    else replace(list, ...agents.map((a, i) => agentCard(api, a, details[i] as AgentDetails, load)))
  }
  void load().catch((e: unknown) => {
    if (!abort.signal.aborted) replace(list, h('p', { class: 'error' }, `Could not load agents: ${String(e)}`))
  })
  return () => abort.abort()
}
