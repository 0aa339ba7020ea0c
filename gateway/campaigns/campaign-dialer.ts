/**
 * The campaign dialer: one per replica, on the shared store. Each tick it settles the attempts whose sessions
 * ended, puts back in line the contacts a dead replica had claimed (never while a session of theirs may be
 * live), claims due contacts of each running campaign whose calling window is open in the contact's own zone
 * (FOR UPDATE SKIP LOCKED, within the campaign's concurrency), and dials each as a normal outbound call
 * (placeOutboundCall: the do-not-call list, the organization's concurrency limit and pacing). A campaign with
 * nothing left to call completes.
 */
import type { Kysely } from 'kysely'
import { setTimeout as sleep } from 'node:timers/promises'
import { type CallingWindow, msUntilWindowCloses, windowOpen } from '../../core/calling-window.js'
import { isVoxgateError } from '../../core/errors.js'
import type { Log } from '../../core/log.js'
import type { CallDeps } from '../admission/call-deps.js'
import { placeOutboundCall } from '../outbound/outbound-calls.js'
import { settleAttempt, unsettledSessions } from '../store/campaign-attempts.js'
import { claimContacts, finishWithoutCall, reclaimAbandoned, releaseContact, renewClaims } from '../store/campaign-contacts.js'
import type { CampaignContactRow, CampaignRow } from '../store/campaign-schema.js'
import { completeIfFinished, moveCampaign, runningCampaigns } from '../store/campaigns.js'
import { getOrganizationRow } from '../store/organizations.js'
import type { Database } from '../store/schema.js'
import { attemptOutcome, nextStep } from './attempt-outcome.js'
import { type CampaignWebhookDeps, sendCampaignEvent } from './campaign-webhooks.js'

/** Errors that say the campaign itself cannot dial (its agent, number or carrier setup): it is paused. */
const CAMPAIGN_ERRORS = new Set([
  'invalid_agent_id',
  'phone_number_not_assigned',
  'carrier_not_configured',
  'validation_failed',
  'bad_request',
])
/** How long a contact waits after a refusal that may pass (no free slot, no balance, a carrier hiccup). */
const REFUSED_DELAY_MS = 5_000
/** Most running campaigns one tick looks at, and most sessions it settles. */
const MAX_CAMPAIGNS_PER_TICK = 200
const MAX_SETTLED_PER_TICK = 500

/** What the dialer needs. */
export interface CampaignDialerDeps {
  readonly db: Kysely<Database>
  readonly log: Log
  readonly calls: CallDeps
  /** Where the carrier posts a call's voice hook, status callbacks and machine detection verdict. */
  readonly hookUrls: { readonly voice: string; readonly status: string; readonly machineDetection: string }
  readonly webhooks: CampaignWebhookDeps
  /** The clock the calling windows are read by (default: the real one; tests move it). */
  readonly now?: (() => Date) | undefined
  /** Pause between ticks. Default 500 ms. */
  readonly tickMs?: number | undefined
}

/** One replica's dialer. `start` begins ticking; `close` stops claiming and waits for its ticks to end. */
export class CampaignDialer {
  readonly #deps: CampaignDialerDeps
  readonly #stop = new AbortController()
  readonly #dials = new Set<Promise<void>>()
  #loop: Promise<void> | undefined

  constructor(deps: CampaignDialerDeps) {
    this.#deps = deps
  }

  get #owner(): string {
    return this.#deps.calls.sessions.keeper.owner
  }

  get #claimTtlMs(): number {
    // A claim must outlive a wait for the organization's dial slot, after which the session holds the contact.
    return this.#deps.calls.sessions.keeper.ttlMs + this.#deps.calls.outboundQueueMaxWaitMs
  }

  /** Starts ticking (idempotent). */
  start(): void {
    this.#loop ??= this.#run()
  }

  /** Stops claiming; calls already placed go on as sessions (any replica settles them). Idempotent. */
  async close(): Promise<void> {
    this.#stop.abort(new Error('the campaign dialer is closing'))
    await this.#loop
    await Promise.allSettled([...this.#dials])
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal
    const tickMs = this.#deps.tickMs ?? 500
    while (!signal.aborted) {
      const started = performance.now()
      try {
        await this.tick()
      } catch (e) {
        this.#deps.log.warn({ err: e }, 'campaign dialer tick failed')
      }
      // A tick every tickMs, however long the last took (a slow one is followed at once, never overlapped).
      await sleep(Math.max(0, tickMs - (performance.now() - started)), undefined, { signal }).catch(() => undefined)
    }
  }

  /** One round: settle, reclaim, claim and dial, complete. */
  async tick(): Promise<void> {
    const { db } = this.#deps
    await renewClaims(db, this.#owner, this.#claimTtlMs)
    await this.#settle()
    await reclaimAbandoned(db)
    if (this.#stop.signal.aborted || this.#deps.calls.sessions.isDraining) return
    for (const campaign of await runningCampaigns(db, MAX_CAMPAIGNS_PER_TICK)) {
      if (this.#stop.signal.aborted) return
      await this.#claimAndDial(campaign)
      const completed = await completeIfFinished(db, campaign.id)
      if (completed !== undefined) {
        this.#deps.log.info({ campaign_id: campaign.id }, 'campaign completed')
        this.#track(sendCampaignEvent(this.#deps.webhooks, completed, 'campaign.completed'))
      }
    }
  }

  async #settle(): Promise<void> {
    const { db } = this.#deps
    const ended = await unsettledSessions(db, MAX_SETTLED_PER_TICK)
    const campaigns = new Map<string, Pick<CampaignRow, 'retry' | 'status'> | undefined>()
    for (const s of ended) {
      if (!campaigns.has(s.campaign_id)) {
        campaigns.set(
          s.campaign_id,
          await db.selectFrom('campaigns').select(['retry', 'status']).where('id', '=', s.campaign_id).executeTakeFirst(),
        )
      }
      const campaign = campaigns.get(s.campaign_id)
      if (campaign === undefined) continue
      const outcome = attemptOutcome(s)
      await settleAttempt(db, s, outcome, (o, attempts) => {
        const next = nextStep(o, attempts, campaign.retry)
        // A canceled campaign dials no one again: the contact ends with what its last call came to.
        return !next.done && campaign.status === 'canceled' ? { done: true, disposition: o === 'not_dialled' ? 'canceled' : o } : next
      })
    }
  }

  async #claimAndDial(campaign: CampaignRow): Promise<void> {
    const org = await getOrganizationRow(this.#deps.db, campaign.organization_id)
    if (org === undefined) return
    // No more claims per tick than the organization's pacing dials in a second (two ticks at least): the dial queue
    // stays about a second deep, full enough that pacing and not the tick sets the rate, short enough that a claimed
    // contact is not left waiting near the queue's bound (OUTBOUND_QUEUE_MAX_WAIT_MS).
    const rate = org.outbound_calls_per_second ?? 1
    const limit = Math.max(1, Math.ceil(rate * Math.max(1, (2 * (this.#deps.tickMs ?? 500)) / 1000)))
    const claimed = await claimContacts(this.#deps.db, {
      campaignId: campaign.id,
      owner: this.#owner,
      claimTtlMs: this.#claimTtlMs,
      now: this.#now(),
      limit,
    })
    for (const contact of claimed) this.#track(this.#dial(campaign, contact))
  }

  async #dial(campaign: CampaignRow, contact: CampaignContactRow): Promise<void> {
    const { db, log } = this.#deps
    const window: CallingWindow = {
      days: campaign.window_days,
      startMinute: campaign.window_start_minute,
      endMinute: campaign.window_end_minute,
    }
    if (!windowOpen(window, contact.timezone, this.#now())) {
      await releaseContact(db, contact.id, 0, 'outside_window')
      return
    }
    const hooks = this.#deps.hookUrls
    // A call still waiting for its dial slot when the window closes is not placed (its session ends unplaced, the
    // contact goes back in line for the next window); one already dialled goes on.
    const closes = new AbortController()
    const timer = setTimeout(
      () => closes.abort(new Error('the calling window closed')),
      msUntilWindowCloses(window, contact.timezone, this.#now()),
    )
    try {
      await placeOutboundCall(this.#deps.calls, {
        organizationId: campaign.organization_id,
        agentId: campaign.agent_id,
        from: campaign.from_phone_number,
        to: contact.phone_number,
        voiceHookUrl: hooks.voice,
        statusCallbackUrl: hooks.status,
        machineDetectionUrl: campaign.machine_detection ? hooks.machineDetection : undefined,
        signal: AbortSignal.any([this.#stop.signal, closes.signal]),
        campaign: {
          contactId: contact.id,
          metadata: {
            campaign_id: campaign.id,
            contact_id: contact.id,
            ...(contact.custom_metadata !== null && { custom_metadata: contact.custom_metadata }),
          },
        },
      })
      // Placed or refused by the carrier, a session now stands for the attempt: its end settles the contact.
    } catch (e) {
      const code = isVoxgateError(e) ? e.code : undefined
      if (code === 'do_not_call') {
        await finishWithoutCall(db, contact.id, 'dnc')
      } else if (code === 'invalid_phone_number') {
        await finishWithoutCall(db, contact.id, 'failed')
      } else if (code !== undefined && CAMPAIGN_ERRORS.has(code)) {
        await releaseContact(db, contact.id, 0)
        const paused = await moveCampaign(db, campaign.organization_id, campaign.id, ['running'], 'paused')
        log.warn({ campaign_id: campaign.id, code }, 'campaign paused: it cannot dial')
        if (paused !== undefined) await sendCampaignEvent(this.#deps.webhooks, paused, 'campaign.paused')
      } else {
        if (closes.signal.aborted) log.info({ campaign_id: campaign.id }, 'the calling window closed before the call could dial')
        else if (code === undefined && !this.#stop.signal.aborted)
          log.warn({ err: e, campaign_id: campaign.id }, 'campaign call could not be placed')
        await releaseContact(db, contact.id, REFUSED_DELAY_MS)
      }
    } finally {
      clearTimeout(timer)
    }
  }

  #now(): Date {
    return this.#deps.now?.() ?? new Date()
  }

  #track(p: Promise<void>): void {
    const tracked = p.catch((e: unknown) => this.#deps.log.warn({ err: e }, 'campaign dialer task failed'))
    this.#dials.add(tracked)
    void tracked.finally(() => this.#dials.delete(tracked))
  }
}
