// A strict multipart/form-data reader (RFC 7578 / RFC 2046) for the speech fake: CRLF line ends, a
// Content-Disposition per part, a Content-Type for files, the closing `--boundary--`. What the fake reads is
// what a Python server (python-multipart, as FastAPI uses it) would read: anything malformed is an error.

/** One part of the form. */
export interface FormPart {
  name: string
  filename?: string
  contentType?: string
  data: Buffer
}

/** The boundary of a `multipart/form-data` content type, or undefined when it is not one. */
export function boundaryOf(contentType: string | undefined): string | undefined {
  const m = /^multipart\/form-data;\s*boundary=("?)([^";]+)\1\s*$/i.exec(contentType ?? '')
  return m?.[2]
}

/** Parses the body; throws with a reason on anything malformed. */
export function parseMultipart(body: Buffer, boundary: string): FormPart[] {
  const delimiter = Buffer.from(`--${boundary}`)
  const parts: FormPart[] = []
  let at = body.indexOf(delimiter)
  if (at !== 0) throw new Error('the body does not start with the boundary')
  for (;;) {
    at += delimiter.length
    if (body.subarray(at, at + 2).toString() === '--') {
      if (body.subarray(at + 2).toString() !== '\r\n') throw new Error('bytes after the closing boundary')
      return parts
    }
    if (body.subarray(at, at + 2).toString() !== '\r\n') throw new Error('no CRLF after a boundary')
    at += 2
    const headersEnd = body.indexOf('\r\n\r\n', at)
    if (headersEnd < 0) throw new Error('a part without the blank line after its headers')
    const headers = new Map<string, string>()
    for (const line of body.subarray(at, headersEnd).toString('utf8').split('\r\n')) {
      const colon = line.indexOf(':')
      if (colon <= 0) throw new Error(`bad part header ${JSON.stringify(line)}`)
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
    }
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headersEnd + 4)
    if (next < 0) throw new Error('a part without a closing boundary')
    const disposition = headers.get('content-disposition') ?? ''
    const name = /(?:^|;\s*)name="([^"]*)"/.exec(disposition)?.[1]
    if (!disposition.startsWith('form-data') || name === undefined) throw new Error('a part without form-data; name="..."')
    const filename = /;\s*filename="([^"]*)"/.exec(disposition)?.[1]
    const contentType = headers.get('content-type')
    parts.push({
      name,
      ...(filename !== undefined && { filename }),
      ...(contentType !== undefined && { contentType }),
      data: Buffer.from(body.subarray(headersEnd + 4, next)),
    })
    at = next + 2
  }
}
