/**
 * The console shell: header, navigation and the view of the current hash route (`#/<view>/<params…>?<query>`):
 * a view's state lives in the hash, so any view can be linked.
 */
import { ConsoleApi, type Credentials } from './api.js'
import { h, replace } from './dom.js'
import { sessionsView } from './sessions.js'
import { sessionView } from './session.js'
import { agentsView } from './agents.js'
import { usageView } from './usage.js'
import { campaignsView, campaignView } from './campaigns.js'

/** A view draws into `el` and returns how to stop its timers when the route changes. */
export type View = (el: HTMLElement, api: ConsoleApi, params: string[], query: URLSearchParams) => () => void

/** The routes; a view without a title is reached by links, not the navigation. */
const VIEWS: Record<string, { title?: string; nav?: string; view: View }> = {
  sessions: { title: 'Calls', view: sessionsView },
  session: { nav: 'sessions', view: sessionView },
  agents: { title: 'Agents & numbers', view: agentsView },
  campaigns: { title: 'Campaigns', view: campaignsView },
  campaign: { nav: 'campaigns', view: campaignView },
  usage: { title: 'Usage & latency', view: usageView },
}

/** Renders the console for a signed-in organization. */
export function consoleApp(root: HTMLElement, creds: Credentials, signOut: () => void): void {
  const api = new ConsoleApi(creds)
  const content = h('section', { id: 'content', class: 'content' })
  const nav = h('nav', { class: 'nav' })
  const who = h(
    'div',
    { class: 'who' },
    h('span', { id: 'org-name', class: 'org' }, creds.organizationName),
    h('span', { class: 'muted small' }, creds.kind === 'admin' ? '· operator' : '· API key'),
    h('button', { id: 'sign-out', type: 'button', class: 'link', onclick: signOut }, 'Sign out'),
  )
  replace(root, h('header', { class: 'top' }, h('span', { class: 'brand' }, 'voxgate'), nav, who), content)

  let stop: () => void = () => undefined
  const route = (): void => {
    const hash = location.hash.replace(/^#\/?/, '')
    const mark = hash.indexOf('?')
    const [first, ...params] = (mark < 0 ? hash : hash.slice(0, mark)).split('/')
    const query = new URLSearchParams(mark < 0 ? '' : hash.slice(mark + 1))
    const name = first !== undefined && VIEWS[first] !== undefined ? first : 'sessions'
    const entry = VIEWS[name] as { title?: string; nav?: string; view: View }
    const active = entry.nav ?? name
    replace(
      nav,
      ...Object.entries(VIEWS)
        .filter(([, v]) => v.title !== undefined)
        .map(([n, v]) => h('a', { href: `#/${n}`, class: n === active ? 'active' : undefined }, v.title)),
    )
    stop()
    replace(content)
    stop = entry.view(content, api, params.map(decodeURIComponent), query)
  }
  window.addEventListener('hashchange', route)
  route()
}
