/**
 * Polls `check` every 20 ms until it returns a value that is not undefined, and returns it; throws after
 * `timeoutMs`, naming `what` it waited for. The one polling loop of the tests: a wait on the state it stands for,
 * never a fixed sleep.
 */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 5000, what = 'a condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await check()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`eventually: timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
