import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/**
 * Forks `count` copies of a helper script (test/unit/helpers/<script>) with `args`, waits until each
 * reports ready, starts them all at one shared moment and resolves their final reports.
 */
export async function raceProcesses<Done>(script: string, args: string[], count = 4): Promise<Done[]> {
  const helper = fileURLToPath(new URL(`./${script}`, import.meta.url))
  const children = Array.from({ length: count }, () => fork(helper, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }))
  await Promise.all(children.map(child => new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve())
    child.once('error', reject)
    child.once('exit', code => reject(new Error(`child exited with ${code} before it was ready`)))
  })))
  const done = children.map(child => new Promise<Done>((resolve, reject) => {
    child.once('message', message => resolve(message as Done))
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`child exited with ${code}`))
    })
  }))
  const startAt = Date.now() + 100
  for (const child of children) child.send({ startAt })
  return Promise.all(done)
}
