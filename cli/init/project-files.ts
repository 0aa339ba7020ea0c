import { AGENT_ID_VAR, WEBHOOK_SECRET_VAR } from '../common/agent-id.js'
import { SOURCE_FILES } from './project-sources.js'

/** What the generated project is told about its agent. */
export interface ProjectInfo {
  name: string
  agentId: string
  webhookSecret: string
  gateway: string
  port: number
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
    scripts: { start: 'node server.js', test: 'node --test test/' },
  }
  return {
    'package.json': `${JSON.stringify(pkg, null, 2)}\n`,
    '.env': [
      '# Written by voxgate init. Keep it out of version control: the secret verifies voxgate webhooks.',
      `${AGENT_ID_VAR}=${p.agentId}`,
      `${WEBHOOK_SECRET_VAR}=${p.webhookSecret}`,
      `PORT=${p.port}`,
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
back. The example echoes what it hears, so it works with no LLM key: replace \`replyTo\` in \`agent.js\`.

## Run it

\`\`\`sh
npm install      # nothing to download: Node's standard library only
npm start        # http://localhost:${p.port}/api/agent
npm test         # node:test: signed requests answered, unsigned ones refused with 401
\`\`\`

Then, in another terminal in this folder, route the agent's webhooks to it:

\`\`\`sh
npx voxgate tunnel          # --port ${p.port} --path /api/agent by default; --tail prints calls live
\`\`\`

The tunnel sets the agent's webhook URL to the gateway's tunnel address while it runs and puts the previous
one back when it stops. Call the agent (its phone number or the gateway's demo page) and you hear the echo.

## Files

- \`server.js\`: the HTTP server; refuses requests without a valid signature (401) or older than 5 minutes.
- \`signature.js\`: \`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">\` with the webhook secret.
- \`agent.js\`: what the agent says for \`session.start\` (the welcome), \`message\` (each user turn) and \`data\`.
- \`.env\`: \`${AGENT_ID_VAR}\`, \`${WEBHOOK_SECRET_VAR}\` and \`PORT\` (never commit it).
`
}
