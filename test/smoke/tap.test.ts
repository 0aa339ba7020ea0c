import t from 'tap'
const n: number = 2
t.equal(n + 1, 3)
