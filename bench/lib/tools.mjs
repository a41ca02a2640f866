// What the orchestrator hands to section modules that live apart from the harness
// (`measure(opts, tools)`): these functions and nothing else.

import { cannon } from './http.mjs'
import { buildNuxt, cpuSecondsOf, log, startServer, stopServer, tempDir } from './processes.mjs'

/**
 * - `log(...args)`: progress to stderr;
 * - `buildNuxt(rootDir, env)`: `nuxi build rootDir` with NODE_ENV=production plus `env`;
 * - `startServer(entry, env, cwd)`: `{ url, port, pid, child }` once the server listens (stopped at the end);
 * - `stopServer(server)`;
 * - `cannon(url, { connections, duration, headers })`: the autocannon result, throws on any failed or non-2xx request;
 * - `cpuSecondsOf(pid)`: user + system CPU seconds from /proc;
 * - `tempDir(prefix)`: a new temp dir, removed at the end.
 */
export const tools = Object.freeze({
  log,
  buildNuxt,
  startServer: (entry, env = {}, cwd = undefined) => startServer(entry, env, cwd),
  stopServer,
  cannon,
  cpuSecondsOf,
  tempDir,
})
