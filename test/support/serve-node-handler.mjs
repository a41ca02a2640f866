// Serves a serverless function's Node handler (`export default (req, res) => …`, as the
// `vercel` preset builds it) on HOST:PORT of the environment (as Nitro's own server reads them),
// the way the platform invokes it: one process per instance, no Nitro server of its own.
// Usage: PORT=3000 node serve-node-handler.mjs <entry.mjs>
import { createServer } from 'node:http'
import { pathToFileURL } from 'node:url'

const [entry] = process.argv.slice(2)
const host = process.env.HOST || '127.0.0.1'
const port = Number(process.env.PORT) || 3000
const { default: handler } = await import(pathToFileURL(entry).href)
if (typeof handler !== 'function') throw new Error(`${entry} exports no default handler`)
createServer(handler).listen(port, host, () => console.log(`Listening on http://${host}:${port}`))
