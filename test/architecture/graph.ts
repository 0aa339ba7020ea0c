/** Directed graphs of names: strongly connected components (Tarjan) and one cycle through a component. */

/** Adjacency: node -> the nodes it points to. */
export type Graph = ReadonlyMap<string, ReadonlySet<string>>

/** Adds the edge `from -> to`, creating both nodes. */
export function addEdge(graph: Map<string, Set<string>>, from: string, to: string): void {
  if (!graph.has(to)) graph.set(to, new Set())
  const out = graph.get(from) ?? new Set<string>()
  out.add(to)
  graph.set(from, out)
}

/** Strongly connected components with more than one node, each sorted, in a stable order. */
export function cyclicComponents(graph: Graph): string[][] {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []

  const visit = (node: string): void => {
    index.set(node, counter)
    low.set(node, counter)
    counter++
    stack.push(node)
    onStack.add(node)
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!))
      }
    }
    if (low.get(node) !== index.get(node)) return
    const component: string[] = []
    let member: string | undefined
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1) components.push(component.sort())
  }

  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node)
  return components.sort((a, b) => a[0]!.localeCompare(b[0]!))
}

/** The shortest cycle from `start` back to itself that stays inside `component`, as nodes (start first and last). */
export function cycleThrough(graph: Graph, component: readonly string[], start: string): string[] {
  const inside = new Set(component)
  const previous = new Map<string, string>()
  const queue = [start]
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      if (!inside.has(next)) continue
      if (next === start) {
        const path = [start]
        for (let at: string | undefined = node; at !== undefined && at !== start; at = previous.get(at)) path.push(at)
        return [...path, start].reverse()
      }
      if (previous.has(next)) continue
      previous.set(next, node)
      queue.push(next)
    }
  }
  return [start]
}

/** The shortest cycle inside `component` (the first by name among equals), as nodes (first and last the same). */
export function shortestCycle(graph: Graph, component: readonly string[]): string[] {
  let best: string[] = []
  for (const start of component) {
    const cycle = cycleThrough(graph, component, start)
    if (best.length === 0 || cycle.length < best.length) best = cycle
  }
  return best
}
