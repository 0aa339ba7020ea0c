// The example project's agent logic (agent.js) and an OpenAI-compatible chat-completions client (llm.js) that
// agent.js shows how to call. String.raw literals: no backticks or ${ inside them.

const AGENT_JS = String.raw`// What the agent says. Replace the echo with your own logic: an LLM call (see below), tools, a database.
import { streamChat } from './llm.js'

/**
 * The reply to one webhook event from voxgate. It may be async, and may return (or resolve to):
 *   - a string: spoken to the caller;
 *   - an iterable or async iterable of strings (an LLM's streamed tokens): spoken as it comes, in whole words;
 *   - { hangup: 'Goodbye!' }: said, then the call ends;
 *   - { data: <any JSON> }: sent to the browser client as response.data (the answer to a data event);
 *   - null or undefined: nothing to say.
 * signal aborts when the caller interrupts (voxgate cancels the request): pass it on to fetch.
 */
export async function replyTo(event, { signal } = {}) {
  switch (event.type) {
    case 'session.start':
      return 'Hello! This is your voxgate agent. Say something and I will repeat it.'
    case 'message':
      if (/\b(bye|goodbye)\b/i.test(event.text || '')) return { hangup: 'Goodbye!' }
      // An LLM instead of the echo: any OpenAI-compatible endpoint (OpenAI, a local Ollama or vLLM server, ...).
      // Set LLM_API_KEY (and LLM_BASE_URL, LLM_MODEL for another server) in .env, then use this line:
      //   return streamChat([{ role: 'system', content: SYSTEM_PROMPT }, { role: 'user', content: event.text }], { signal })
      return 'You said: ' + (event.text || 'nothing') + '.'
    case 'data':
      return { data: { received: event.data ?? null } }
    default:
      // Lifecycle events (session.end, session.update) need only an acknowledgement.
      return null
  }
}

/** What the LLM is told it is (used with streamChat above). */
export const SYSTEM_PROMPT = 'You are a helpful voice assistant. Answer in one or two short spoken sentences, no lists or markup.'
`

const LLM_JS = String.raw`// An OpenAI-compatible chat-completions client, streaming: POST <base>/chat/completions with stream: true and
// yield the text of each delta. Standard library only (fetch). Used by agent.js once you uncomment its call.
import { loadEnv } from './env.js'

/**
 * Yields the reply's text as it streams in. messages: [{ role: 'system' | 'user' | 'assistant', content }].
 * Configuration from .env or the environment: LLM_API_KEY, LLM_BASE_URL (default https://api.openai.com/v1),
 * LLM_MODEL (default gpt-4o-mini). signal aborts the request (the caller interrupted).
 */
export async function* streamChat(messages, { signal, env = loadEnv(new URL('./.env', import.meta.url)) } = {}) {
  const base = (env.LLM_BASE_URL || 'https://api.openai.com/v1').replace(/\/+$/, '')
  const res = await fetch(base + '/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + (env.LLM_API_KEY || '') },
    body: JSON.stringify({ model: env.LLM_MODEL || 'gpt-4o-mini', messages, stream: true }),
    signal,
  })
  if (!res.ok) throw new Error('the LLM answered HTTP ' + res.status + ': ' + (await res.text()).slice(0, 200))
  const decoder = new TextDecoder()
  let buffered = ''
  for await (const chunk of res.body) {
    buffered += decoder.decode(chunk, { stream: true })
    let nl
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl).trim()
      buffered = buffered.slice(nl + 1)
      if (!line.startsWith('data:')) continue
      const data = line.slice('data:'.length).trim()
      if (data === '[DONE]') return
      const text = JSON.parse(data).choices?.[0]?.delta?.content
      if (typeof text === 'string' && text !== '') yield text
    }
  }
}
`

/** agent.js and llm.js. */
export const AGENT_SOURCE_FILES: Record<string, string> = {
  'agent.js': AGENT_JS,
  'llm.js': LLM_JS,
}
