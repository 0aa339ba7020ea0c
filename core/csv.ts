/**
 * CSV as RFC 4180 writes it: fields separated by commas, quoted with `"` when they hold a comma, a quote or a
 * line break (a quote doubled inside). Pure; the caller bounds the input's size.
 */

/** Parses `text` into rows of fields. A trailing line break makes no empty row; a UTF-8 BOM is dropped. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0
  for (; i < text.length; i++) {
    const ch = text[i]
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"'
          i++
        } else quoted = false
      } else field += ch
    } else if (ch === '"' && field.length === 0) quoted = true
    else if (ch === ',') {
      row.push(field)
      field = ''
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++
      row.push(field)
      rows.push(row)
      row = []
      field = ''
    } else field += ch
  }
  if (field.length > 0 || row.length > 0) {
    row.push(field)
    rows.push(row)
  }
  return rows
}

/**
 * One CSV line (with CRLF). A field a spreadsheet would run as a formula (starting `=`, `@`, or `+`/`-` not
 * followed by a digit) is prefixed with `'`, so an exported file is safe to open.
 */
export function csvLine(fields: readonly (string | number | null | undefined)[]): string {
  return `${fields.map(csvField).join(',')}\r\n`
}

function csvField(value: string | number | null | undefined): string {
  let s = value === null || value === undefined ? '' : String(value)
  if (/^[=@\t\r]|^[+-](?!\d)/.test(s)) s = `'${s}`
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s
}
