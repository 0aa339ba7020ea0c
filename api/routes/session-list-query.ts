/** The query of GET /v1/sessions: search, outcome filters and the paging cursor, validated with zod. */
import { z } from 'zod'
import { END_REASONS, type EndReason } from '../../core/end-reason.js'
import type { SessionListPosition, SessionListQuery } from '../../gateway/store/session-list.js'

/** The list's page size when none is asked for, and the most one page holds. */
export const SESSION_PAGE_DEFAULT = 50
export const SESSION_PAGE_MAX = 200

/** Longest text a search criterion may be (ids are far shorter; a name is at most 200). */
const MAX_TEXT = 200

/** What separators a typed phone number may hold besides its digits and a leading `+`. */
const PHONE_SEPARATORS = /[\s().-]/g

/** `+1 (555) 123-4567` -> `15551234567`; undefined when it is not a phone number or part of one. */
export function phoneDigits(text: string): string | undefined {
  const compact = text.replace(PHONE_SEPARATORS, '')
  return /^\+?\d{1,15}$/.test(compact) ? compact.replace(/^\+/, '') : undefined
}

/** The opaque `next_cursor`: base64url of `[at, id]`. */
export function encodeCursor(p: SessionListPosition): string {
  return Buffer.from(JSON.stringify([p.at, p.id])).toString('base64url')
}

/** The position a `next_cursor` names; undefined when it is not one this endpoint made. */
export function decodeCursor(cursor: string): SessionListPosition | undefined {
  if (cursor.length > 300 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (!Array.isArray(value) || value.length !== 2) return undefined
  const [at, id] = value as unknown[]
  if (typeof at !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(at) || Number.isNaN(Date.parse(at))) return undefined
  if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,100}$/.test(id)) return undefined
  return { at, id }
}

/** A text criterion: trimmed, at most {@link MAX_TEXT} characters; empty means not given. */
const text = (description: string) =>
  z
    .string()
    .trim()
    .max(MAX_TEXT)
    .transform((v) => (v === '' ? undefined : v))
    .optional()
    .describe(description)

const REASONS: readonly string[] = END_REASONS

/** Query of GET /v1/sessions (also the API reference's parameters). */
export const sessionListQuery = z
  .strictObject({
    status: z.enum(['live', 'ended', 'all']).default('all').describe('live (connected now), ended, or all (default)'),
    end_reason: z
      .string()
      .max(1000)
      .transform((v, ctx) => {
        const reasons = v
          .split(',')
          .map((r) => r.trim())
          .filter((r) => r !== '')
        const unknown = reasons.filter((r) => !REASONS.includes(r))
        if (reasons.length === 0 || unknown.length > 0) {
          ctx.addIssue({
            code: 'custom',
            message: `must be end reasons separated by commas (${unknown.length > 0 ? `unknown: ${unknown.join(', ')}; ` : ''}known: ${REASONS.join(', ')})`,
          })
          return z.NEVER
        }
        return reasons as EndReason[]
      })
      .optional()
      .describe('only sessions that ended with one of these reasons, comma-separated (e.g. call_busy,call_no_answer)'),
    failed_turns: z
      .enum(['true', 'false'])
      .transform((v) => v === 'true')
      .optional()
      .describe('true: only sessions with at least one failed turn (a transcript entry with a failure)'),
    q: text('search: a session, conversation, agent or carrier call id (exact), part of an agent name, or digits of either phone number'),
    phone: z
      .string()
      .max(40)
      .transform((v, ctx) => {
        const digits = phoneDigits(v.trim())
        if (digits === undefined) {
          ctx.addIssue({ code: 'custom', message: 'must be an E.164 number or some of its digits (e.g. +15551234567 or 5551234)' })
          return z.NEVER
        }
        return digits
      })
      .optional()
      .describe("the caller's or the called number: E.164, or digits found anywhere in it"),
    conversation_id: text('exactly this conversation'),
    session_id: text('exactly this session'),
    agent: text("the agent's id, or part of its name (case-insensitive)"),
    cursor: z
      .string()
      .transform((v, ctx) => {
        const position = decodeCursor(v)
        if (position === undefined) {
          ctx.addIssue({ code: 'custom', message: 'is not valid: pass the next_cursor of the page before, as it came' })
          return z.NEVER
        }
        return position
      })
      .optional()
      .describe('the next_cursor of the page before; absent: the newest sessions'),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(SESSION_PAGE_MAX)
      .default(SESSION_PAGE_DEFAULT)
      .describe(`sessions per page, 1..${SESSION_PAGE_MAX} (default ${SESSION_PAGE_DEFAULT})`),
  })
  .superRefine((q, ctx) => {
    if (q.status === 'live' && q.end_reason !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['end_reason'], message: 'cannot be combined with status=live: a live session has not ended' })
    }
  })

/** The store's query for a parsed request. */
export function storeQuery(q: z.output<typeof sessionListQuery>): SessionListQuery {
  return {
    filter: q.status,
    limit: q.limit,
    endReasons: q.end_reason,
    failedTurns: q.failed_turns,
    phoneDigits: q.phone,
    conversationId: q.conversation_id,
    sessionId: q.session_id,
    agent: q.agent,
    text: q.q === undefined ? undefined : { value: q.q, digits: phoneDigits(q.q) },
    after: q.cursor,
  }
}
