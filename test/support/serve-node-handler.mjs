// Serves a serverless function's Node handler (`export default (req, res) => …`, as the
// `vercel` preset builds it) on 127.0.0.1:PORT, the way the platform invokes it: one process
// per instance, no Nitro server of its own. Usage: node serve-node-handler.mjs <entry.mjs> <port>
import { createServer } from 'node:http'
import { pathToFileURL } from 'node:url'

const [entry, port] = process.argv.slice(2)
const { default: handler } = await import(pathToFileURL(entry).href)
if (typeof handler !== 'function') throw new Error(`${entry} exports no default handler`)
createServer(handler).listen(Number(port), '127.0.0.1', () => console.log(`Listening on http://127.0.0.1:${port}`))
