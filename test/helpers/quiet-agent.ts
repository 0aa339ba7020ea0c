/** A config whose built-in agent does not speak first: for tests about sessions rather than conversation. */
export function withoutWelcome<C extends { plugins: { use: string; options?: Record<string, unknown> }[] }>(config: C): C {
  const copy = structuredClone(config)
  for (const p of copy.plugins) if (p.use === 'agent.llm') p.options = { ...p.options, welcome_message: '' }
  return copy
}
