/** The test's Prometheus text-format parser ships no types: it takes the text and returns the metric families. */
declare module 'parse-prometheus-text-format' {
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
