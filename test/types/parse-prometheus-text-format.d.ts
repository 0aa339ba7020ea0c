// The package ships no types; this is the shape its README documents (values stay strings, as in the text).
declare module 'parse-prometheus-text-format' {
  interface PromSample {
    value?: string
    labels?: Record<string, string>
    buckets?: Record<string, string>
    count?: string
    sum?: string
  }
  interface PromFamily {
    name: string
    help: string
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED'
    metrics: PromSample[]
  }
  export default function parsePrometheusTextFormat(text: string): PromFamily[]
}
