import { proseLines } from './markdown-tables.js'

/**
 * Shell blocks a page marks as commands to check: a ```sh (or ```bash) fence right after the line
 * `<!-- docs:check -->` (blank lines between are allowed). The marker is invisible on a rendered page.
 */
export const RUNNABLE_MARKER = '<!-- docs:check -->'

/** The marked shell blocks of a page, each as its lines. */
export function runnableBlocks(markdown: string): string[][] {
  const blocks: string[][] = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]?.trim() !== RUNNABLE_MARKER) continue
    let j = i + 1
    while (j < lines.length && lines[j]?.trim() === '') j++
    if (!/^\s*```(sh|bash|shell)\s*$/.test(lines[j] ?? '')) {
      blocks.push([`<${RUNNABLE_MARKER} is not followed by a sh fence>`])
      continue
    }
    const body: string[] = []
    for (j++; j < lines.length && !/^\s*```\s*$/.test(lines[j] ?? ''); j++) body.push(lines[j] as string)
    blocks.push(body)
    i = j
  }
  return blocks
}

/** Whether a page has marked blocks outside code (a marker inside a fence is an example of the marker). */
export function hasMarker(markdown: string): boolean {
  return proseLines(markdown).some((line) => line.trim() === RUNNABLE_MARKER)
}

/** One command of a block: the variables it sets before it, and its words. */
export interface ShellCommand {
  env: string[]
  words: string[]
  text: string
}

/** Splits words the way a shell would for these simple commands: quotes kept together, quotes dropped. */
function words(text: string): string[] {
  const out: string[] = []
  for (const m of text.matchAll(/(?:'[^']*'|"(?:\\.|[^"\\])*"|\$\([^)]*\)|[^\s'"])+/g)) {
    out.push(m[0].replace(/'([^']*)'|"((?:\\.|[^"\\])*)"/g, (_, a: string | undefined, b: string | undefined) => a ?? b ?? ''))
  }
  return out
}

/** The text of a block as logical lines: continuations joined, a quote left open carried to the next line. */
function logicalLines(block: string[]): string[] {
  const out: string[] = []
  let pending = ''
  for (const raw of block) {
    const line = pending === '' ? raw : `${pending} ${raw.trim()}`
    if (/\\\s*$/.test(line)) {
      pending = line.replace(/\\\s*$/, '')
      continue
    }
    const quotes = (line.replace(/"(?:\\.|[^"\\])*"/g, '').match(/'/g) ?? []).length
    if (quotes % 2 === 1) {
      pending = line
      continue
    }
    pending = ''
    out.push(line)
  }
  if (pending !== '') out.push(pending)
  return out
}

/** A line without its `# comment` (a `#` inside quotes or a word is not one). */
function withoutComment(line: string): string {
  let quote: string | undefined
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string
    if (quote !== undefined) {
      if (c === quote) quote = undefined
    } else if (c === "'" || c === '"') quote = c
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1] as string))) return line.slice(0, i)
  }
  return line
}

/** Splits a line at `&&`, `||`, `|` and `;` outside quotes. */
function splitCommands(line: string): string[] {
  const parts: string[] = []
  let current = ''
  let quote: string | undefined
  let depth = 0
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string
    if (quote !== undefined) {
      if (c === quote) quote = undefined
      current += c
      continue
    }
    if (c === "'" || c === '"') quote = c
    else if (c === '(' && line[i - 1] === '$') depth++
    else if (c === ')' && depth > 0) depth--
    else if (depth === 0 && (c === '|' || c === ';' || (c === '&' && line[i + 1] === '&'))) {
      parts.push(current)
      current = ''
      if (line[i + 1] === c) i++
      continue
    }
    current += c
  }
  parts.push(current)
  return parts.map((p) => p.trim()).filter((p) => p !== '')
}

/**
 * The commands of a block: continuation lines and quotes over several lines joined, comments dropped, split at
 * `&&`, `||`, `|` and `;`; a command substituted into a variable (`ORG=$(curl ...)`) is a command of its own.
 */
export function commandsOf(block: string[]): ShellCommand[] {
  const out: ShellCommand[] = []
  for (const line of logicalLines(block)) {
    const code = withoutComment(line).trim()
    if (code === '') continue
    for (const part of splitCommands(code)) {
      const w = words(part)
      const env: string[] = []
      while (w.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0] as string)) {
        const assignment = w.shift() as string
        env.push(assignment.split('=')[0] as string)
        const inner = /^[^=]*=\$\((.*)\)$/.exec(assignment)?.[1]
        if (inner !== undefined) out.push(...commandsOf([inner]))
      }
      // Assignments alone set shell variables for later lines, not a program's environment.
      if (w.length > 0) out.push({ env, words: w, text: part })
    }
  }
  return out
}

/** What a checker needs to know of the project: its npm scripts, the API's routes, the CLI's parser. */
export interface CommandWorld {
  scripts: Set<string>
  /** `GET /v1/agents/{agent_id}` style routes. */
  routes: { method: string; path: string }[]
  /** Exit code of `voxgate <args>` checked for its flags only (never run): 0 when the flags parse. */
  cliFlagsParse: (args: string[]) => Promise<{ code: number; output: string }>
  /** Environment variables something reads: the configuration reference's, and the benchmarks' knobs. */
  documentedEnv: Set<string>
}

/** A route template's pattern: `{name}` and `$VAR`/`<name>` segments in the page match any one segment. */
function routeMatches(template: string, path: string): boolean {
  const t = template.split('/')
  const p = path.split('/')
  if (t.length !== p.length) return false
  return t.every((seg, i) => {
    const got = p[i] as string
    if (/^\{.+\}$/.test(seg)) return got !== ''
    return seg === got
  })
}

/** The method and path of a curl command, or a reason it cannot be read. */
export function curlRequest(w: string[]): { method: string; path: string } | string {
  let method: string | undefined
  let hasBody = false
  let url: string | undefined
  for (let i = 1; i < w.length; i++) {
    const a = w[i] as string
    if (a === '-X' || a === '--request') method = w[++i]
    else if (/^-X[A-Z]+$/.test(a)) method = a.slice(2)
    else if (/^(-d|--data|--data-raw|--data-binary|--json|-F|--form|-T)$/.test(a)) {
      hasBody = true
      i++
    } else if (/^(-H|--header|-o|--output|-u|--user|-w|--write-out|--max-time|-m|--connect-timeout)$/.test(a)) i++
    else if (!a.startsWith('-') && url === undefined) url = a
  }
  if (url === undefined) return 'no URL'
  // http://host:port/path, $GATEWAY/path, or curl's scheme-less localhost:8080/path.
  const path = url.replace(/^(https?:\/\/[^/]+|\$\{?[A-Za-z_]+\}?|[\w.-]+(:\d+)?(?=\/))/, '').split(/[?#]/)[0] as string
  return { method: (method ?? (hasBody ? 'POST' : 'GET')).toUpperCase(), path: path === '' ? '/' : path }
}

/** The problems of one command; none when it is not a command this checker knows (cd, openssl, docker). */
export async function commandProblems(cmd: ShellCommand, world: CommandWorld): Promise<string[]> {
  const problems = cmd.env
    .filter((name) => !world.documentedEnv.has(name))
    .map((name) => `${name} is read by no code of the gateway, the CLI or the benchmarks`)
  let w = cmd.words
  if (w[0] === 'npx' && w[1] === 'voxgate') w = w.slice(1)
  if (w[0] === 'node' && w[1] === 'bin/voxgate.js') w = w.slice(1)
  const head = w[0]
  if (head === 'voxgate' || head === 'bin/voxgate.js') {
    const { code, output } = await world.cliFlagsParse(w.slice(1))
    if (code !== 0) problems.push(`\`${cmd.text}\`: the CLI refuses it (exit ${code}): ${output.trim().split('\n')[0]}`)
  } else if (head === 'npm') {
    const sub = w[1]
    const script = sub === 'run' || sub === 'run-script' ? w[2] : sub === 'start' || sub === 'test' ? sub : undefined
    if (script !== undefined && !world.scripts.has(script)) problems.push(`\`${cmd.text}\`: package.json has no script "${script}"`)
  } else if (head === 'curl') {
    const req = curlRequest(w)
    if (typeof req === 'string') problems.push(`\`${cmd.text}\`: ${req}`)
    else if (!world.routes.some((r) => r.method === req.method && routeMatches(r.path, req.path))) {
      problems.push(`\`${cmd.text}\`: the gateway has no route ${req.method} ${req.path}`)
    }
  }
  return problems
}
