// A stand-in for bcryptjs, loaded by the bcrypt worker threads in tests: answers at once with the
// thread it ran in, and misbehaves on request (a password of 'crash' ends the thread, 'throw' throws).
import { threadId } from 'node:worker_threads'

export function hashSync(password, cost) {
  if (password === 'crash') process.exit(3)
  if (password === 'throw') throw new Error('thrown on purpose')
  const until = Date.now() + cost
  while (Date.now() < until) {
    // Holds the thread for `cost` milliseconds, as a real hash would.
  }
  return `fake:${threadId}:${password}`
}

export function compareSync(password, hash) {
  return hash.endsWith(`:${password}`)
}
