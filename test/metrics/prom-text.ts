import parsePrometheusTextFormat from 'parse-prometheus-text-format'

/** A scrape parsed by a Prometheus text-format parser, with look-ups by family name and labels. */
export interface Scrape {
  /** The metric families, as declared by their TYPE lines. */
  names: Set<string>
  /**
   * The value of the sample `name` whose labels include `labels`. For a histogram, ask for `<name>_count`,
   * `<name>_sum` or `<name>_bucket` (with `le`), as the text names its series.
   */
  value(name: string, labels?: Record<string, string>): number | undefined
}

/**
 * Parses the exposition text twice with `parse-prometheus-text-format` (which throws on malformed text): once as
 * it is, for the families and their types; once without the TYPE lines, so every series is read as plain samples.
 * The library folds the label sets of a labelled histogram into one entry (prom2json's shape), which would hide
 * per-label counts; plain samples keep them.
 */
export function parseScrape(text: string): Scrape {
  const families = parsePrometheusTextFormat(text)
  const plain = parsePrometheusTextFormat(
    text
      .split('\n')
      .filter((l) => !l.startsWith('# TYPE '))
      .join('\n'),
  )
  const samples = new Map<string, { value?: string; labels?: Record<string, string> }[]>()
  for (const f of plain) samples.set(f.name, [...(samples.get(f.name) ?? []), ...f.metrics])
  return {
    names: new Set(families.map((f) => f.name)),
    value(name, labels = {}) {
      const sample = samples.get(name)?.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
      return sample?.value === undefined ? undefined : Number(sample.value)
    },
  }
}
