/** An HTTP `Range` header against a resource of `size` bytes (RFC 9110 section 14): one range, inclusive bounds. */
export type ByteRange = { kind: 'whole' } | { kind: 'range'; start: number; end: number } | { kind: 'unsatisfiable' }

/**
 * Parses a `Range` header. No header, another unit or several ranges (which we do not serve as multipart) mean the
 * whole resource; a malformed `bytes=` range or one starting past the end is unsatisfiable.
 */
export function parseByteRange(header: string | undefined, size: number): ByteRange {
  if (header === undefined || header.trim() === '') return { kind: 'whole' }
  const m = /^\s*bytes\s*=\s*(.*)$/i.exec(header)
  if (m === null) return { kind: 'whole' }
  const spec = (m[1] as string).trim()
  if (spec.includes(',')) return { kind: 'whole' }
  const r = /^(\d*)-(\d*)$/.exec(spec)
  if (r === null || (r[1] === '' && r[2] === '')) return { kind: 'unsatisfiable' }
  if (r[1] === '') {
    const suffix = Number(r[2])
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' }
    return { kind: 'range', start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(r[1])
  const end = r[2] === '' ? size - 1 : Math.min(Number(r[2]), size - 1)
  if (start >= size || end < start) return { kind: 'unsatisfiable' }
  return { kind: 'range', start, end }
}
