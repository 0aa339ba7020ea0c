/** Usage (minutes per day) and turn latency percentiles per day, as uPlot charts with the numbers beneath. */
import uPlot from 'uplot'
import type { ConsoleApi } from './api.js'
import { h, replace } from './dom.js'
import type { DailyStats, DailyStatsList } from './types.js'

const DAYS = 30

function chartWidth(el: HTMLElement): number {
  return Math.max(320, Math.min(1200, el.clientWidth - 40))
}

/** Half a day of room on each side, so the first and last days' bars are whole. */
function dayRange(xs: number[]): uPlot.Scale.Range {
  return () => [(xs[0] ?? 0) - 43_200, (xs[xs.length - 1] ?? 0) + 43_200]
}

function minutesChart(el: HTMLElement, days: DailyStats[], xs: number[]): uPlot {
  return new uPlot(
    {
      width: chartWidth(el),
      height: 220,
      legend: { show: true },
      scales: { x: { time: true, range: dayRange(xs) }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.15)] } },
      axes: [{}, { label: 'minutes', size: 60 }],
      series: [
        {},
        {
          label: 'Minutes',
          stroke: '#3558d6',
          fill: 'rgba(53, 88, 214, 0.35)',
          width: 1,
          paths: uPlot.paths.bars?.({ size: [0.7, 40] }),
          points: { show: false },
        },
      ],
    },
    [xs, days.map((d) => d.minutes)],
    el,
  )
}

function latencyChart(el: HTMLElement, days: DailyStats[], xs: number[]): uPlot {
  // Points as well as lines: a day between quiet days is a lone point, which a line alone would not show.
  const line = (label: string, stroke: string): uPlot.Series => ({
    label,
    stroke,
    width: 2,
    spanGaps: true,
    points: { show: true, size: 6, fill: stroke },
  })
  return new uPlot(
    {
      width: chartWidth(el),
      height: 220,
      scales: { x: { time: true, range: dayRange(xs) }, y: { range: (_u, _min, max) => [0, Math.max(100, (max ?? 0) * 1.15)] } },
      axes: [{}, { label: 'ms', size: 60 }],
      series: [{}, line('p50', '#36b37e'), line('p90', '#f5a623'), line('p99', '#e05d5d')],
    },
    [xs, days.map((d) => d.latency_p50_ms), days.map((d) => d.latency_p90_ms), days.map((d) => d.latency_p99_ms)],
    el,
  )
}

function numbersTable(days: DailyStats[]): HTMLElement {
  const withTraffic = days.filter((d) => d.sessions > 0 || d.turns > 0).reverse()
  if (withTraffic.length === 0) return h('p', { class: 'muted' }, `No calls in the last ${DAYS} days.`)
  const ms = (v: number | null) => (v === null ? '—' : `${Math.round(v)}`)
  return h(
    'table',
    { id: 'daily-table' },
    h('thead', {}, h('tr', {}, ...['Day (UTC)', 'Calls', 'Minutes', 'Turns', 'p50 ms', 'p90 ms', 'p99 ms'].map((t) => h('th', {}, t)))),
    h(
      'tbody',
      {},
      ...withTraffic.map((d) =>
        h(
          'tr',
          { 'data-date': d.date },
          h('td', {}, d.date),
          h('td', {}, d.sessions),
          h('td', { class: 'minutes' }, d.minutes.toFixed(2)),
          h('td', {}, d.turns),
          h('td', { class: 'p50' }, ms(d.latency_p50_ms)),
          h('td', { class: 'p90' }, ms(d.latency_p90_ms)),
          h('td', { class: 'p99' }, ms(d.latency_p99_ms)),
        ),
      ),
    ),
  )
}

export function usageView(el: HTMLElement, api: ConsoleApi): () => void {
  const minutesBox = h('div', { class: 'chart', id: 'minutes-chart' })
  const latencyBox = h('div', { class: 'chart', id: 'latency-chart' })
  const tableBox = h('div', {})
  el.append(
    h(
      'div',
      { class: 'stack' },
      h('div', { class: 'card' }, h('h2', {}, `Minutes per day (last ${DAYS} days)`), minutesBox),
      h('div', { class: 'card' }, h('h2', {}, 'Turn latency percentiles per day'), latencyBox),
      h('div', { class: 'card' }, h('h2', {}, 'By day'), tableBox),
    ),
  )
  const abort = new AbortController()
  const charts: uPlot[] = []
  void api
    .v1<DailyStatsList>('GET', `/v1/stats/daily?days=${DAYS}`, undefined, abort.signal)
    .then(({ days }) => {
      if (abort.signal.aborted) return
      // uPlot's time axis is in seconds; each day is placed at its UTC midnight.
      const xs = days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000)
      charts.push(minutesChart(minutesBox, days, xs), latencyChart(latencyBox, days, xs))
      replace(tableBox, numbersTable(days))
    })
    .catch((e: unknown) => {
      if (!abort.signal.aborted) replace(tableBox, h('p', { class: 'error' }, `Could not load usage: ${String(e)}`))
    })
  return () => {
    abort.abort()
    for (const c of charts) c.destroy()
  }
}
