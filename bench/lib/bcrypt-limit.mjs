// Child process: bcrypt verifications per second of @node-rs/bcrypt at a cost and a concurrency,
// as the password provider runs them (libuv thread pool), on a process of its own like the server.
// Usage: node bench/lib/bcrypt-limit.mjs <cost> <concurrency> <seconds> <warm-up seconds>
// Prints one JSON line: { "perSec": …, "done": …, "seconds": … }.

import { hash, verify } from '@node-rs/bcrypt'

const [cost, concurrency, seconds, warmup] = process.argv.slice(2).map(Number)
const password = 'Bench-Password-42x'
const hashed = await hash(password, { cost })

// Closed loops of `concurrency` verifications; completions are counted after the warm-up only.
let measuring = false
let running = true
let done = 0
const loops = Array.from({ length: concurrency }, async () => {
  while (running) {
    if (!(await verify(password, hashed))) throw new Error('bcrypt verify failed')
    if (measuring && running) done++
  }
})
await new Promise(r => setTimeout(r, warmup * 1000))
measuring = true
const started = performance.now()
await new Promise(r => setTimeout(r, seconds * 1000))
running = false
const elapsed = (performance.now() - started) / 1000
await Promise.all(loops)
console.log(JSON.stringify({ perSec: done / elapsed, done, seconds: elapsed }))
