/**
 * Under `voxgate serve --workers N` a scrape lands on whichever worker the primary hands its connection to, so
 * each worker's own registry would show a different part of the machine at each scrape. The worker that takes
 * the scrape asks the primary; the primary asks every worker for its registry (prom-client's AggregatorRegistry,
 * over the cluster's IPC channel) and answers the aggregate: counters and gauges such as live sessions summed,
 * Node's process metrics by prom-client's rule for each. A worker that does not answer within 5 s fails the scrape
 * (503) rather than hiding its share.
 */
import cluster from 'node:cluster'
import { AggregatorRegistry } from 'prom-client'
import type { MetricsSource } from '../core/metrics.js'
import { voxError } from '../core/errors.js'
import type { PrometheusMetrics } from '../server/prometheus-metrics.js'

/** A worker's request for the aggregate, and the primary's answer. */
type ScrapeRequest = { readonly voxgate: 'scrape'; readonly id: number }
type ScrapeAnswer = { readonly voxgate: 'scrape-answer'; readonly id: number; readonly text?: string; readonly error?: string }

/** Past prom-client's own 5 s for a silent worker. */
const ANSWER_WAIT_MS = 7_000
/** Scrapes one worker waits on at once; more are refused (a scraper runs one at a time). */
const MAX_PENDING = 8

/** In the primary: answers the workers' scrape requests with every worker's metrics aggregated. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry()
  cluster.on('message', (worker, m: unknown) => {
    if (!isMessage<ScrapeRequest>(m, 'scrape')) return
    const answer = (a: Omit<ScrapeAnswer, 'voxgate' | 'id'>) => {
      if (worker.isConnected()) worker.send({ voxgate: 'scrape-answer', id: m.id, ...a } satisfies ScrapeAnswer, () => undefined)
    }
    aggregator.clusterMetrics().then(
      (text) => answer({ text }),
      (e: unknown) => answer({ error: e instanceof Error ? e.message : String(e) }),
    )
  })
}

/** In a worker: what GET /metrics serves, the primary's aggregate of every worker including this one. */
export function clusterMetricsSource(own: PrometheusMetrics): MetricsSource {
  AggregatorRegistry.setRegistries([own.registry])
  // Constructing one makes prom-client answer the primary's requests for this worker's registry.
  new AggregatorRegistry()
  const pending = new Map<number, (a: ScrapeAnswer | undefined) => void>()
  let nextId = 0
  process.on('message', (m: unknown) => {
    if (isMessage<ScrapeAnswer>(m, 'scrape-answer')) pending.get(m.id)?.(m)
  })
  return {
    contentType: own.contentType,
    async render() {
      if (pending.size >= MAX_PENDING || process.send === undefined) {
        throw voxError('metrics_unavailable', undefined, { details: ['too many scrapes at once'], retryAfterSeconds: 1 })
      }
      const id = nextId++
      const answer = await new Promise<ScrapeAnswer | undefined>((resolve) => {
        const timer = setTimeout(() => settle(undefined), ANSWER_WAIT_MS)
        const settle = (a: ScrapeAnswer | undefined) => {
          clearTimeout(timer)
          pending.delete(id)
          resolve(a)
        }
        pending.set(id, settle)
        process.send!({ voxgate: 'scrape', id } satisfies ScrapeRequest, undefined, {}, (e) => {
          if (e) settle(undefined)
        })
      })
      if (answer?.text === undefined) {
        const why = answer?.error ?? 'the primary did not answer'
        throw voxError('metrics_unavailable', undefined, { details: [why], retryAfterSeconds: 1 })
      }
      return answer.text
    },
  }
}

function isMessage<T extends { voxgate: string; id: number }>(m: unknown, kind: T['voxgate']): m is T {
  return (
    typeof m === 'object' && m !== null && (m as { voxgate?: unknown }).voxgate === kind && typeof (m as { id?: unknown }).id === 'number'
  )
}
