/** The value of `--workers N` or `--workers=N` (validated with the configuration); null for other arguments. */
export function workersFlag(args: string[]): string | undefined | null {
  if (args.length === 0) return undefined
  const [a, b] = args
  if (a === '--workers' && b !== undefined && args.length === 2) return b
  if (a?.startsWith('--workers=') && args.length === 1) return a.slice('--workers='.length)
  return null
}
