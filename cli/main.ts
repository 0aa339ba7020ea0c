import { serve } from './serve.js'

const USAGE = `usage: voxgate <command>

commands:
  serve     run the gateway (configuration from the environment; see README)
            --workers N   N processes on one port (node:cluster; needs DATABASE_URL); WORKERS in the environment
  help      show this text
`

/** The value of `--workers N` or `--workers=N` (validated with the configuration); null for other arguments. */
function workersFlag(args: string[]): string | undefined | null {
  if (args.length === 0) return undefined
  const [a, b] = args
  if (a === '--workers' && b !== undefined && args.length === 2) return b
  if (a?.startsWith('--workers=') && args.length === 1) return a.slice('--workers='.length)
  return null
}

/** Dispatches `voxgate <command>`; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  switch (command) {
    case 'serve': {
      const workers = workersFlag(rest)
      if (workers === null) {
        process.stderr.write(`voxgate: serve takes only --workers N\n${USAGE}`)
        return 2
      }
      return serve(workers === undefined ? process.env : { ...process.env, WORKERS: workers })
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE)
      return 0
    default:
      process.stderr.write(`voxgate: unknown command "${command}"\n${USAGE}`)
      return 2
  }
}

// A reader of stdout or stderr that went away (a log collector, a closed pipe) emits EPIPE on the stream:
// the text is lost, the process goes on (unhandled, the error would crash it).
process.stdout.on('error', () => undefined)
process.stderr.on('error', () => undefined)

process.exit(await main(process.argv.slice(2)))
