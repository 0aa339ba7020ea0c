/** The lines outside fenced code blocks. */
export function proseLines(markdown: string): string[] {
  const out: string[] = []
  let fenced = false
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) {
      fenced = !fenced
      continue
    }
    if (!fenced) out.push(line)
  }
  return out
}

/**
 * The part of a page under the first heading matching `heading`, down to the next heading of the same or a higher
 * level (its subsections included).
 */
export function section(markdown: string, heading: RegExp): string {
  const lines = proseLines(markdown)
  const start = lines.findIndex((line) => /^#{1,6}\s/.test(line) && heading.test(line))
  if (start < 0) return ''
  const level = (/^#+/.exec(lines[start] as string)?.[0] ?? '#').length
  const end = lines.findIndex((line, i) => i > start && new RegExp(`^#{1,${level}}\\s`).test(line))
  return lines.slice(start, end < 0 ? undefined : end).join('\n')
}

/**
 * The names a page's tables document: each `code span` in the first cell of a table row (header and separator rows
 * are skipped). A reference page lists one name, or a few sharing a meaning, per row.
 */
export function tableNames(markdown: string): Set<string> {
  const names = new Set<string>()
  const lines = proseLines(markdown)
  lines.forEach((line, i) => {
    if (!line.startsWith('|')) return
    const next = lines[i + 1] ?? ''
    if (/^\|[\s:|-]+\|$/.test(next)) return // a header row
    if (/^\|[\s:|-]+\|$/.test(line)) return // the separator
    const first = line.split('|')[1] ?? ''
    for (const m of first.matchAll(/`([^`]+)`/g)) names.add(m[1] as string)
  })
  return names
}
