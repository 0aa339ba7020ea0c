/** The sign-in: an organization API key, or the admin token and then an organization. Shared by /console and /console/device. */
import { ApiError, request, type Credentials } from './api.js'
import { h, replace } from './dom.js'

interface Whoami {
  organization_id: string
  organization_name: string
}
interface OrgList {
  organizations: { id: string; name: string }[]
}

function refusal(e: unknown, what: string): string {
  if (e instanceof ApiError && e.status < 500) return `${what} was refused: ${e.message}`
  return `Could not sign in: ${e instanceof Error ? e.message : String(e)}`
}

/** Renders the sign-in card into `root` and resolves once the person is signed in. */
export function signIn(root: HTMLElement, purpose: string): Promise<Credentials> {
  return new Promise((resolve) => {
    const key = h('input', { id: 'signin-key', type: 'password', autocomplete: 'off', placeholder: 'vgk_…', spellcheck: 'false' })
    const admin = h('input', { id: 'signin-admin-token', type: 'password', autocomplete: 'off', placeholder: 'ADMIN_TOKEN' })
    const error = h('p', { id: 'signin-error', class: 'error', role: 'alert' })
    const submit = h('button', { id: 'signin-submit', type: 'submit', class: 'primary' }, 'Sign in')
    const picker = h('div', { class: 'org-step', hidden: true })
    const form = h(
      'form',
      { class: 'card signin', autocomplete: 'off' },
      h('h1', {}, 'voxgate'),
      h('p', { class: 'muted' }, purpose),
      h('label', { for: 'signin-key' }, 'Organization API key'),
      key,
      h('div', { class: 'or' }, 'or, as the operator'),
      h('label', { for: 'signin-admin-token' }, 'Admin token'),
      admin,
      submit,
      error,
      picker,
    )
    replace(root, h('main', { class: 'centered' }, form))

    const chooseOrganization = (token: string, orgs: OrgList['organizations']): void => {
      const select = h('select', { id: 'org-picker' }, ...orgs.map((o) => h('option', { value: o.id }, `${o.name} (${o.id})`)))
      const go = h('button', { id: 'org-continue', type: 'button', class: 'primary' }, 'Continue')
      go.addEventListener('click', () => {
        const org = orgs.find((o) => o.id === select.value)
        if (org === undefined) return
        resolve({ kind: 'admin', token, organizationId: org.id, organizationName: org.name })
      })
      replace(picker, h('label', { for: 'org-picker' }, 'Organization'), select, go)
      picker.hidden = false
      submit.hidden = true
      select.focus()
    }

    form.addEventListener('submit', (e) => {
      e.preventDefault()
      error.textContent = ''
      const k = key.value.trim()
      const a = admin.value.trim()
      if (k === '' && a === '') {
        error.textContent = 'Enter an organization API key or the admin token.'
        return
      }
      submit.disabled = true
      const attempt =
        k !== ''
          ? request<Whoami>('GET', '/v1/whoami', k).then(
              (who) => resolve({ kind: 'key', key: k, organizationId: who.organization_id, organizationName: who.organization_name }),
              (err: unknown) => {
                error.textContent = refusal(err, 'This API key')
              },
            )
          : request<OrgList>('GET', '/admin/v1/organizations', a).then(
              (list) => {
                if (list.organizations.length === 0) error.textContent = 'There are no organizations yet.'
                else chooseOrganization(a, list.organizations)
              },
              (err: unknown) => {
                error.textContent = refusal(err, 'The admin token')
              },
            )
      void attempt.finally(() => {
        submit.disabled = false
      })
    })
    key.focus()
  })
}
