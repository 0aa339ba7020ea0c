import { AGENT_ID_VAR, WEBHOOK_SECRET_VAR } from '../common/agent-id.js'
import { SOURCE_FILES } from './project-sources.js'

/** What the generated project is told about its agent. */
export interface ProjectInfo {
  name: string
  agentId: string
  webhookSecret: string
  gateway: string
  port: number
  /** The dev dependency on the voxgate CLI (`file:<path to the checkout>` or a registry range), for `npx voxgate`. */
  cliDependency: string
}

/** Every file of the example project, path -> text. */
export function projectFiles(p: ProjectInfo): Record<string, string> {
  const pkg = {
    name: p.name,
    version: '0.1.0',
    private: true,
    description: 'A voxgate agent backend (created by voxgate init)',
    type: 'module',
    engines: { node: '>=20' },
    scripts: { start: 'node server.js', test: 'node --test' },
    // `npx voxgate tunnel` runs this CLI: npm links the checkout into node_modules (nothing is downloaded).
    devDependencies: { voxgate: p.cliDependency },
    // npm 11 asks before running a linked package's install scripts; the checkout's own `prepare` skips the work
    // when another project installs it, so approving it only keeps npm from printing a warning.
    ...(p.cliDependency.startsWith('file:') && { allowScripts: { [p.cliDependency]: true } }),
  }
  return {
    'package.json': `${JSON.stringify(pkg, null, 2)}\n`,
    '.env': [
      '# Written by voxgate init. Keep it out of version control: the secret verifies voxgate webhooks.',
      `${AGENT_ID_VAR}=${p.agentId}`,
      `${WEBHOOK_SECRET_VAR}=${p.webhookSecret}`,
      '# The port npm start listens on; npx voxgate tunnel forwards to it.',
      `PORT=${p.port}`,
      '# For the LLM call in agent.js (any OpenAI-compatible endpoint):',
      '# LLM_API_KEY=',
      '# LLM_BASE_URL=https://api.openai.com/v1',
      '# LLM_MODEL=gpt-4o-mini',
      '',
    ].join('\n'),
    '.gitignore': 'node_modules/\n.env\n',
    'README.md': readme(p),
    ...SOURCE_FILES,
  }
}

function readme(p: ProjectInfo): string {
  return `# ${p.name}

A voice agent backend for [voxgate](${p.gateway}), agent \`${p.agentId}\`.

voxgate turns the caller's speech into text and POSTs it here (\`POST /api/agent\`, signed with the agent's
webhook secret in the \`service-signature\` header); what this server answers as Server-Sent Events is spoken
back. The example echoes what it hears, so it works with no LLM key: change \`replyTo\` in \`agent.js\`.

## Run it

\`\`\`sh
npm install      # links the voxgate CLI (${p.cliDependency}); nothing else: Node's standard library only
npm start        # http://localhost:${p.port}/api/agent (PORT in .env)
npm test         # node:test: replies, streaming, signatures (401 without a valid one), the LLM client
\`\`\`

Then, in another terminal in this folder, route the agent's webhooks to it:

\`\`\`sh
npx voxgate tunnel          # forwards to http://localhost:${p.port}/api/agent (PORT in .env); --tail prints calls live
\`\`\`

The tunnel sets the agent's webhook URL to the gateway's tunnel address while it runs and puts the previous
one back when it stops (Ctrl-C). Talk to the agent with the link \`voxgate init\` printed (the gateway's demo page:
type, or speak once the gateway has an STT key) or call its phone number: you hear the echo.

## Where your logic goes

\`replyTo(event, { signal })\` in \`agent.js\` answers each event. It may be \`async\` and return a string (spoken),
an iterable or async iterable of strings (spoken as it streams, in whole words: an LLM's tokens),
\`{ hangup: 'Goodbye!' }\`, \`{ data: ... }\` (to the browser client) or nothing. \`signal\` aborts when the caller
interrupts: pass it to \`fetch\`. For an LLM, set \`LLM_API_KEY\` in \`.env\` (and \`LLM_BASE_URL\`, \`LLM_MODEL\` for
any other OpenAI-compatible server, e.g. a local Ollama at \`http://localhost:11434/v1\`) and use the commented
\`streamChat\` line in \`agent.js\`.

## Files

- \`server.js\`: the HTTP server; refuses requests without a valid signature (401) or older than 5 minutes.
- \`signature.js\`: \`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">\` with the webhook secret.
- \`agent.js\`: what the agent says for \`session.start\` (the welcome), \`message\` (each user turn) and \`data\`.
- \`llm.js\`: a streaming OpenAI-compatible chat-completions client (standard library \`fetch\`).
- \`.env\`: \`${AGENT_ID_VAR}\`, \`${WEBHOOK_SECRET_VAR}\`, \`PORT\`, the LLM settings (never commit it).
`
}
