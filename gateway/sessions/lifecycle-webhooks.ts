/**
 * A session's lifecycle webhooks (`session.start`, `session.update`, `session.end`): sent to the agent's
 * `session_webhook` when it asks for the event, signed with the agent's secret, queued and retried in order,
 * each delivery journaled and counted.
 */
import type { PipelineConfig, SessionWebhookEvent } from '../../pipeline/index.js'
import { NO_METRICS } from '../../core/metrics.js'
import type { SessionRow } from '../store/schema.js'
import { deliveryOutcome, WebhookQueue } from '../webhooks/webhook-queue.js'
import { sessionDeliveryJournal } from './delivery-journal.js'
import type { SessionDeps } from './session-deps.js'

/** The lifecycle webhooks of one session; nothing is sent when its config asks for none. */
export class LifecycleWebhooks {
  readonly #queue: WebhookQueue | undefined
  readonly #events: readonly string[]

  constructor(deps: SessionDeps, row: SessionRow, config: PipelineConfig, webhookSecret: string) {
    const hook = config.session_webhook
    this.#events = hook?.events ?? []
    if (hook === undefined || hook.events.length === 0) return
    const metrics = deps.metrics ?? NO_METRICS
    this.#queue = new WebhookQueue(
      { url: hook.url, secret: webhookSecret, customHeaders: hook.custom_headers },
      deps.log.child({ session_id: row.id }),
      {
        policy: deps.webhookPolicy,
        ...deps.webhookDelivery,
        onResult: (r) => metrics.webhookDelivery('lifecycle', deliveryOutcome(r)),
        journal: sessionDeliveryJournal(deps.db, deps.log, row),
      },
    )
  }

  /** Sends `event` when the config asks for it; `build` runs only then. */
  emit(event: SessionWebhookEvent, build: () => { type: string } & Record<string, unknown>): void {
    if (this.#queue === undefined || !this.#events.includes(event)) return
    this.#queue.send(build())
  }

  /** Waits until queued webhooks are delivered or given up. */
  async drain(timeoutMs: number): Promise<void> {
    await this.#queue?.drain(timeoutMs)
  }

  /** Delivery results so far. */
  get results() {
    return this.#queue?.results ?? []
  }
}
