/** A failure the CLI reports in one line and exits with `exitCode` (1 failure, 2 usage). */
export class CliError extends Error {
  readonly exitCode: 1 | 2
  constructor(message: string, exitCode: 1 | 2 = 1) {
    super(message)
    this.name = 'CliError'
    this.exitCode = exitCode
  }
}

/** The SPEC's text for an agent the signed-in organization does not own (or that does not exist). */
export const AGENT_NOT_OWNED =
  'Failed to retrieve Agent information: the organization you are signed in to does not own this agent ' +
  '(log out, log in, and select the organization that owns it)'
