// Child process of the body limit tests: a client in a process of its own (in the server's
// process, its reads and writes would take turns with the server's). POSTs `bytes` of a chunked
// body to each of `paths` in turn, `rounds` times, one request at a time, writing as fast as the
// connection takes it.
// - `client` = `close` or `keep-alive`: Node's HTTP client (Connection: close, or a keep-alive
//   agent), which stops sending once it has the answer, as ordinary clients do.
// - `client` = `stubborn`: a raw connection that goes on sending whatever the answer, until its
//   body is sent or the connection ends; `stubborn-slow` does so with a chunk every 50 ms.
// Prints one JSON line per request: the status and body of the answer, the error the connection
// ended with, how much of the body went out and (stubborn clients) how long the connection lasted.
import { Agent, request } from 'node:http'
import { connect } from 'node:net'

const [base, rounds, bytes, client, ...paths] = process.argv.slice(2)
const url = new URL(base)
const total = Number(bytes)
const agent = client === 'keep-alive' ? new Agent({ keepAlive: true }) : false
const chunk = Buffer.alloc(16 * 1024, 'a')

function post(path) {
  return new Promise((resolve) => {
    let settled = false
    let sent = 0
    const settle = (result) => {
      if (settled) return
      settled = true
      resolve({ path, sent, ...result })
    }
    const req = request({ host: url.hostname, port: url.port, path, method: 'POST', agent, headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
      const chunks = []
      res.on('data', data => chunks.push(data))
      res.on('end', () => settle({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', error => settle({ status: res.statusCode, error: error.code ?? error.message }))
    })
    req.on('error', error => settle({ error: error.code ?? error.message }))
    const pump = () => {
      while (!settled) {
        if (sent >= total) return void req.end()
        sent += chunk.length
        if (!req.write(chunk)) return void req.once('drain', pump)
      }
    }
    pump()
  })
}

function stubbornPost(path) {
  return new Promise((resolve) => {
    let sent = 0
    let received = ''
    let error
    const started = Date.now()
    const socket = connect({ host: url.hostname, port: Number(url.port), allowHalfOpen: true })
    socket.on('data', (data) => {
      received += data.toString('latin1')
    })
    socket.on('error', (e) => {
      error ??= e.code ?? e.message
    })
    socket.on('close', () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received)?.[1]
      resolve({ path, sent, error, status: status ? Number(status) : undefined, body: received.split('\r\n\r\n')[1], ms: Date.now() - started })
    })
    socket.write(`POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`)
    const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])
    const pump = () => {
      while (!socket.destroyed && socket.writable) {
        if (sent >= total) return void socket.end('0\r\n\r\n')
        sent += chunk.length
        if (!socket.write(frame)) return void socket.once('drain', pump)
        if (client === 'stubborn-slow') return void setTimeout(pump, 50)
      }
    }
    pump()
  })
}

for (let round = 0; round < Number(rounds); round++) {
  for (const path of paths) console.log(JSON.stringify(await (client.startsWith('stubborn') ? stubbornPost(path) : post(path))))
}
if (agent) agent.destroy()
