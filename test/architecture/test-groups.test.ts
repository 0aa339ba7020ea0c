// bin/test-groups.js puts short unit test files together into one process: which files may share one, how they are
// grouped, and how a group's measured times go back to its files.
import t from 'tap'

interface Times {
  wallMs: number
  cpuMs?: number
  childCpuMs?: number
  rssMb?: number
}
interface Groups {
  GROUP_CPU_MS: number
  GROUP_MAX_FILES: number
  aloneBecause(source: string): string | undefined
  groupFiles(files: string[], times: Record<string, Times>, readSource: (f: string) => string): string[][]
  groupName(files: string[]): string
  shareTimes(files: string[], measured: Times, last: Record<string, Times>): Record<string, Times>
}
// A plain JavaScript program of ours, loaded from the checkout (not bundled into this test).
const groups = (await import(new URL('../../bin/test-groups.js', import.meta.url).href)) as Groups

t.test('a file that could tell it shares a process runs alone', async (t) => {
  const plain = "import t from 'tap'\nt.test('a', async (t) => {\n  const x = await f()\n  process.env.X\n})\n"
  t.equal(groups.aloneBecause(plain), undefined, 'tests that only use what they make, awaits inside tests')
  t.equal(groups.aloneBecause("t.beforeEach(() => {})\nt.test('a', () => {})\n"), 'a root hook or setting')
  t.equal(groups.aloneBecause('t.teardown(() => gw.close())\n'), 'a root hook or setting')
  t.equal(groups.aloneBecause('const gw = await startTestGateway()\n'), 'top-level await')
  t.equal(groups.aloneBecause('await setup()\n'), 'top-level await')
  t.equal(groups.aloneBecause("t.test('a', async () => {\n  process.env.VOXGATE_X = '1'\n})\n"), 'changes the process')
  t.equal(groups.aloneBecause("t.test('a', async () => {\n  process.chdir(dir)\n})\n"), 'changes the process')
  t.equal(groups.aloneBecause("process.on('warning', f)\n"), 'changes the process')
  t.equal(groups.aloneBecause('t.test("a", async () => { if (process.env.X === "1") {} })\n'), undefined, 'reading the environment is fine')
  t.equal(groups.aloneBecause('delete process.env.X\n'), 'changes the environment')
  t.equal(groups.aloneBecause('globalThis.fetch = fake\n'), 'changes globals')
  t.equal(groups.aloneBecause("t.test('a', async (t) => {\n  t.clock.enter()\n})\n"), 'changes globals')
})

t.test('short busy files share processes, about three seconds of CPU each, in run order', async (t) => {
  const unit = { wallMs: 1_000, cpuMs: 1_000 }
  const times: Record<string, Times> = {
    long: { wallMs: 20_000, cpuMs: 4_000 },
    a: unit,
    b: unit,
    hooked: unit,
    c: unit,
    d: unit,
    fresh: undefined as unknown as Times,
    spawns: { wallMs: 2_000, cpuMs: 500, childCpuMs: 1_500 },
  }
  const files = ['long', 'a', 'b', 'hooked', 'c', 'd', 'fresh', 'spawns']
  const source = (f: string) => (f === 'hooked' ? 't.before(() => {})\n' : "t.test('x', () => {})\n")
  t.same(groups.groupFiles(files, times, source), [['long'], ['a', 'b', 'c'], ['hooked'], ['d'], ['fresh'], ['spawns']])
  const many = Array.from({ length: 30 }, (_, i) => `f${i}`)
  const light = Object.fromEntries(many.map((f) => [f, { wallMs: 200, cpuMs: 150 }]))
  const sizes = groups.groupFiles(many, light, source).map((g) => g.length)
  t.same(sizes, [12, 12, 6], `at most ${groups.GROUP_MAX_FILES} files in a process`)
})

t.test("a group's times are shared out to its files by their last CPU", async (t) => {
  const last = { a: { wallMs: 1_000, cpuMs: 300 }, b: { wallMs: 1_000, cpuMs: 100 } }
  t.same(groups.shareTimes(['a', 'b'], { wallMs: 2_000, cpuMs: 800, childCpuMs: 0, rssMb: 90 }, last), {
    a: { wallMs: 1_500, cpuMs: 600, childCpuMs: 0, rssMb: 90 },
    b: { wallMs: 500, cpuMs: 200, childCpuMs: 0, rssMb: 90 },
  })
  const alone = { wallMs: 700, cpuMs: 650, childCpuMs: 0, rssMb: 80 }
  t.same(groups.shareTimes(['a'], alone, last), { a: alone }, 'a file alone keeps its own')
  t.same(groups.shareTimes(['x', 'y'], { wallMs: 1_000, cpuMs: 400 }, {}), {
    x: { wallMs: 500, cpuMs: 200, childCpuMs: 0, rssMb: undefined },
    y: { wallMs: 500, cpuMs: 200, childCpuMs: 0, rssMb: undefined },
  })
  t.equal(groups.groupName(['a']), 'a')
  t.equal(groups.groupName(['a', 'b', 'c']), 'a (+2 in its process: b, c)')
})
