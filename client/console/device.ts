/** /console/device: approve or deny a `voxgate login` code after signing in. */
import { ApiError, authOf, request, type Credentials } from './api.js'
import { h, replace } from './dom.js'

const PREFIX = '/v1/cli/device_authorizations'

/** Renders the approval card for the code in the URL (or one typed in). */
export function deviceView(root: HTMLElement, creds: Credentials, codeFromUrl: string | null): void {
  const result = h('p', { id: 'device-result', role: 'status', class: 'device-result' })
  const code = h('div', { id: 'device-code', class: 'device-code' }, codeFromUrl ?? '')
  const typed = h('input', { id: 'device-code-input', placeholder: 'ABCD-EFGH', autocomplete: 'off', spellcheck: 'false' })
  const approve = h('button', { id: 'device-approve', type: 'button', class: 'primary' }, 'Approve')
  const deny = h('button', { id: 'device-deny', type: 'button', class: 'danger' }, 'Deny')
  const userCode = (): string => (codeFromUrl ?? typed.value).trim()
  typed.addEventListener('input', () => {
    code.textContent = typed.value.trim().toUpperCase()
  })

  const decide = async (action: 'approve' | 'deny'): Promise<void> => {
    const c = userCode()
    if (c === '') {
      result.textContent = 'Enter the code the terminal shows.'
      return
    }
    approve.disabled = true
    deny.disabled = true
    const body: Record<string, string> = { user_code: c }
    if (action === 'approve' && creds.kind === 'admin') body.organization_id = creds.organizationId
    try {
      await request(`POST`, `${PREFIX}/${action}`, authOf(creds).bearer, { body })
      result.textContent = action === 'approve' ? 'Approved' : 'Denied'
      result.className = `device-result ${action === 'approve' ? 'ok' : 'denied'}`
      hint.textContent =
        action === 'approve'
          ? `The terminal is now signed in to ${creds.organizationName}. You can close this tab.`
          : 'The terminal was not signed in.'
    } catch (e) {
      result.textContent = e instanceof ApiError ? e.message : `Failed: ${String(e)}`
      result.className = 'device-result error'
      approve.disabled = false
      deny.disabled = false
    }
  }
  approve.addEventListener('click', () => void decide('approve'))
  deny.addEventListener('click', () => void decide('deny'))
  const hint = h('p', { class: 'muted' }, 'Check that this code matches the one your terminal shows.')

  replace(
    root,
    h(
      'main',
      { class: 'centered' },
      h(
        'div',
        { class: 'card device' },
        h('h1', {}, 'Sign in a terminal'),
        h('p', {}, 'A command line asks to act for ', h('strong', {}, creds.organizationName), '.'),
        codeFromUrl === null && h('div', {}, h('label', { for: 'device-code-input' }, 'Code from the terminal'), typed),
        code,
        hint,
        h('div', { class: 'actions' }, deny, approve),
        result,
      ),
    ),
  )
}
