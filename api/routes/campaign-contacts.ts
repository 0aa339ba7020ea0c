/**
 * A campaign's contacts: added in batches as JSON (`{ contacts: [...] }`) or CSV (`text/csv`, a header row naming
 * `phone_number`, optionally `timezone`, other columns becoming custom_metadata), listed with their attempts, and
 * exported as CSV. A bad row is reported by number and never stops the batch.
 */
import type Router from '@koa/router'
import type { Kysely } from 'kysely'
import { csvLine } from '../../core/csv.js'
import { voxError } from '../../core/errors.js'
import { checkContacts, csvContacts, type ContactInput, type RowError } from '../../gateway/campaigns/contact-import.js'
import { addContacts, contactAttempts, listContacts, MAX_CONTACTS_PER_CAMPAIGN } from '../../gateway/store/campaign-contacts.js'
import type { CampaignAttemptRow } from '../../gateway/store/campaign-schema.js'
import { databaseTimeZones } from '../../gateway/store/campaigns.js'
import type { Database } from '../../gateway/store/schema.js'
import type { ApiState } from '../auth.js'
import { readBody, readRaw } from '../http/body.js'
import { newRouter } from '../http/router.js'
import { campaignOr404 } from './campaigns.js'
import { contactView } from './campaign-views.js'

/** Largest contacts upload: a whole campaign's CSV with some metadata per row. */
export const MAX_CONTACTS_BODY_BYTES = 32 * 1024 * 1024
/** Most contacts one list page holds. */
const MAX_PAGE = 500
/** Contacts read per export query. */
const EXPORT_PAGE = 1000

/** The contact routes, for the API-key-protected /v1 router. */
export function campaignContactsRouter(deps: { db: Kysely<Database> }): Router<ApiState> {
  const { db } = deps
  const r = newRouter<ApiState>()

  r.post('/v1/campaigns/:campaign_id/contacts', async (ctx) => {
    const campaign = await campaignOr404(db, ctx.state.organizationId, ctx.params.campaign_id as string)
    if (campaign.status === 'completed' || campaign.status === 'canceled') {
      throw voxError('campaign_state', `a ${campaign.status} campaign takes no more contacts`)
    }
    const rows = await uploadedRows(ctx)
    if (rows.length > MAX_CONTACTS_PER_CAMPAIGN)
      throw voxError('campaign_full', `a batch holds at most ${MAX_CONTACTS_PER_CAMPAIGN} contacts`)
    const checked = checkContacts(rows, campaign.default_timezone)
    // The dialer tests each window in SQL, by the database's own zone names: a zone it lacks is refused here.
    const known = await databaseTimeZones(db, [...new Set(checked.contacts.map((c) => c.timezone))])
    const errors: RowError[] = [...checked.errors]
    const contacts = checked.contacts.filter((c) => {
      if (known.has(c.timezone)) return true
      errors.push({ row: c.row, phone_number: c.phoneNumber, error: `the database does not know the time zone ${c.timezone}` })
      return false
    })
    const stored = await addContacts(db, { id: campaign.id, organizationId: campaign.organization_id }, contacts)
    const byRow = new Map(contacts.map((c) => [c.row, c.phoneNumber]))
    for (const row of stored.duplicateRows) {
      errors.push({ row, phone_number: byRow.get(row) ?? null, error: 'the campaign already has this number' })
    }
    errors.sort((a, b) => a.row - b.row)
    ctx.body = { received: rows.length, added: stored.added, rejected: errors.length, errors }
  })

  r.get('/v1/campaigns/:campaign_id/contacts', async (ctx) => {
    const campaign = await campaignOr404(db, ctx.state.organizationId, ctx.params.campaign_id as string)
    const after = intParam(ctx.query.after, 'after', 0)
    const limit = Math.min(intParam(ctx.query.limit, 'limit', 100), MAX_PAGE)
    const status = ctx.query.status
    if (status !== undefined && status !== 'pending' && status !== 'dialing' && status !== 'done') {
      throw voxError('validation_failed', 'status must be pending, dialing or done')
    }
    const page = await listContacts(db, campaign.id, { afterRow: after, limit: Math.max(limit, 1), status })
    const attempts = grouped(
      await contactAttempts(
        db,
        page.map((c) => c.id),
      ),
    )
    const last = page.at(-1)
    ctx.body = {
      contacts: page.map((c) => contactView(c, attempts.get(c.id) ?? [])),
      next_after: page.length === limit && last !== undefined ? last.row_number : null,
    }
  })

  r.get('/v1/campaigns/:campaign_id/export', async (ctx) => {
    const campaign = await campaignOr404(db, ctx.state.organizationId, ctx.params.campaign_id as string)
    ctx.type = 'text/csv; charset=utf-8'
    ctx.set('Content-Disposition', `attachment; filename="${campaign.id}.csv"`)
    const header = ['row', 'phone_number', 'timezone', 'status', 'disposition', 'attempts', 'last_outcome']
    const parts: string[] = [csvLine([...header, 'last_session_id', 'last_attempt_at', 'custom_metadata'])]
    let after = 0
    for (;;) {
      const page = await listContacts(db, campaign.id, { afterRow: after, limit: EXPORT_PAGE })
      const attempts = grouped(
        await contactAttempts(
          db,
          page.map((c) => c.id),
        ),
      )
      for (const c of page) {
        const last = attempts.get(c.id)?.at(-1)
        parts.push(
          csvLine([
            c.row_number,
            c.phone_number,
            c.timezone,
            c.status,
            c.disposition,
            c.attempts,
            c.last_outcome,
            last?.session_id,
            last?.started_at.toISOString(),
            c.custom_metadata === null ? '' : JSON.stringify(c.custom_metadata),
          ]),
        )
      }
      const end = page.at(-1)
      if (page.length < EXPORT_PAGE || end === undefined) break
      after = end.row_number
    }
    ctx.body = parts.join('')
  })
  return r
}

async function uploadedRows(ctx: Parameters<Parameters<Router<ApiState>['post']>[1]>[0]): Promise<ContactInput[]> {
  const type = (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase()
  if (type === 'text/csv') {
    const parsed = csvContacts((await readRaw(ctx, MAX_CONTACTS_BODY_BYTES)).toString('utf8'))
    if ('error' in parsed) throw voxError('validation_failed', parsed.error)
    return parsed.rows
  }
  const body = await readBody(ctx, MAX_CONTACTS_BODY_BYTES)
  const value = body.value as { contacts?: unknown } | undefined
  if (body.kind !== 'json' || value === null || typeof value !== 'object' || !Array.isArray(value.contacts)) {
    throw voxError('validation_failed', 'send { "contacts": [ { "phone_number": ... }, ... ] } as JSON, or a CSV as text/csv')
  }
  return value.contacts as ContactInput[]
}

function intParam(raw: unknown, name: string, fallback: number): number {
  if (raw === undefined) return fallback
  const n = typeof raw === 'string' && /^\d{1,9}$/.test(raw) ? Number(raw) : Number.NaN
  if (Number.isNaN(n)) throw voxError('validation_failed', `${name} must be a whole number`)
  return n
}

function grouped(attempts: CampaignAttemptRow[]): Map<string, CampaignAttemptRow[]> {
  const by = new Map<string, CampaignAttemptRow[]>()
  for (const a of attempts) by.set(a.contact_id, [...(by.get(a.contact_id) ?? []), a])
  return by
}
