/**
 * The calls list's search, outcome filter and page, kept in the URL hash (`#/sessions?q=…&outcome=…&cursor=…`)
 * so a view can be linked; and the API queries that view reads. Pure: no DOM, tested in Node.
 */
import { END_REASONS } from './types.js'

/** `''` every call, `live`, `ended` (any reason), `failed` (a failed turn, live or ended), or one end reason. */
export type Outcome = '' | 'live' | 'ended' | 'failed' | (typeof END_REASONS)[number]

export interface CallsFilter {
  /** Phone number, conversation, session, agent or call id, or part of an agent name; '' for none. */
  q: string
  outcome: Outcome
  /** Calls per page. */
  limit: number
  /** Where this page starts (the `next_cursor` of the one before); undefined: the newest. */
  cursor: string | undefined
}

export const PAGE_SIZES = [25, 50, 100, 200] as const
export const DEFAULT_PAGE_SIZE = 50
/** Live calls are one list, refreshed every second; more than this many at once are counted, not all shown. */
export const LIVE_LIMIT = 100

const OUTCOMES: readonly string[] = ['', 'live', 'ended', 'failed', ...END_REASONS]

/** The filter a hash's query holds; values it does not know fall back to the defaults. */
export function parseCallsFilter(query: URLSearchParams): CallsFilter {
  const outcome = query.get('outcome') ?? ''
  const limit = Number(query.get('limit'))
  const cursor = query.get('cursor') ?? ''
  return {
    q: (query.get('q') ?? '').trim().slice(0, 200),
    outcome: (OUTCOMES.includes(outcome) ? outcome : '') as Outcome,
    limit: (PAGE_SIZES as readonly number[]).includes(limit) ? limit : DEFAULT_PAGE_SIZE,
    cursor: cursor === '' ? undefined : cursor,
  }
}

/** The hash of a filter: only what differs from the defaults, so the plain list stays `#/sessions`. */
export function callsHash(f: CallsFilter): string {
  const p = new URLSearchParams()
  if (f.q !== '') p.set('q', f.q)
  if (f.outcome !== '') p.set('outcome', f.outcome)
  if (f.limit !== DEFAULT_PAGE_SIZE) p.set('limit', String(f.limit))
  if (f.cursor !== undefined) p.set('cursor', f.cursor)
  const query = p.toString()
  return query === '' ? '#/sessions' : `#/sessions?${query}`
}

/** True when the list is narrowed (a search or an outcome), not merely paged. */
export function isFiltered(f: CallsFilter): boolean {
  return f.q !== '' || f.outcome !== ''
}

/** GET /v1/sessions for the live list, or undefined when the outcome leaves live calls out. */
export function liveListPath(f: CallsFilter): string | undefined {
  if (f.outcome !== '' && f.outcome !== 'live' && f.outcome !== 'failed') return undefined
  const p = new URLSearchParams({ status: 'live', limit: String(LIVE_LIMIT) })
  if (f.outcome === 'failed') p.set('failed_turns', 'true')
  if (f.q !== '') p.set('q', f.q)
  return `/v1/sessions?${p}`
}

/** GET /v1/sessions for the page of ended calls, or undefined when only live calls are asked for. */
export function endedListPath(f: CallsFilter): string | undefined {
  if (f.outcome === 'live') return undefined
  const p = new URLSearchParams({ status: 'ended', limit: String(f.limit) })
  if (f.outcome === 'failed') p.set('failed_turns', 'true')
  else if (f.outcome !== '' && f.outcome !== 'ended') p.set('end_reason', f.outcome)
  if (f.q !== '') p.set('q', f.q)
  if (f.cursor !== undefined) p.set('cursor', f.cursor)
  return `/v1/sessions?${p}`
}

/** Words for an outcome in the filter menu. */
export function outcomeLabel(o: Outcome): string {
  if (o === '') return 'All calls'
  if (o === 'live') return 'Live now'
  if (o === 'ended') return 'Ended (any reason)'
  if (o === 'failed') return 'With failed turns'
  return `Ended: ${o.replace(/_/g, ' ')}`
}

/** Every outcome, in menu order. */
export function outcomes(): Outcome[] {
  return OUTCOMES as Outcome[]
}
