/** Options of {@link startUpstashRestServer}. */
export interface UpstashRestServerOptions {
  /** The Bearer token every request must carry. */
  token: string
  /** The Redis server behind it: a `redis://` URL, or its host and port. */
  redis: string | { host: string, port: number }
  /**
   * Called with every command before it runs (its arguments as strings), e.g. to count round
   * trips; a promise it returns is awaited first (a slow database).
   */
  onCommand?: (command: string[]) => unknown
}

/** A running server: its base URL (`http://127.0.0.1:<port>`), its token, and how to stop it. */
export interface UpstashRestServer {
  url: string
  token: string
  /** Stops the server (open connections included) and its Redis connection. */
  close(): Promise<void>
}

/**
 * Starts a loopback server (a free port on 127.0.0.1) that speaks the Upstash REST protocol in
 * front of a Redis server: POST `/` (one command), `/pipeline` and `/multi-exec` (several), Bearer
 * token auth, base64 answers when the request asks for them.
 */
export function startUpstashRestServer(options: UpstashRestServerOptions): Promise<UpstashRestServer>
