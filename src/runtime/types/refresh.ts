/**
 * Options of the refresh token: its cookie, the storage that keeps it (memory, fs, Redis over TCP
 * or over HTTP) and the
 * encryption of stored records. Part of the module options (`svcAuth.tokenRefresh`).
 */

import type { Duration, SameSite, StorageDriverName } from './options'

export interface RefreshCookieOptions {
  /** @default 'svc-refresh' */
  cookieName: string
  /** Cookie and refresh token lifetime (seconds or a duration string). @default 604800 */
  maxAge: Duration
  /** @default true */
  secure: boolean
  /** @default true */
  httpOnly: boolean
  /** @default 'lax' */
  sameSite: SameSite
  /** @default '/' */
  path: string
}

export interface RefreshStorageOptions {
  /**
   * unstorage driver of the module's single mount: `fs`, `memory`, `redis`, or `upstash` (Redis
   * over HTTP, the Upstash REST protocol: for serverless hosts and Cloudflare Workers, where TCP
   * connections and the file system are not available).
   * @default 'fs'
   */
  driver: StorageDriverName
  /**
   * Key prefix of every record.
   * @default 'refresh:'
   */
  prefix: string
  /**
   * fs driver: directory of the records.
   * @default './.data/refresh-tokens'
   */
  base: string
  /**
   * redis driver: connection URL (`redis://user:pass@host:port/db`). Wins over host/port.
   * upstash driver: the REST URL (`https://…`; `http://` only for a loopback host); when empty,
   * `UPSTASH_REDIS_REST_URL` from the environment of the server.
   * @default ''
   */
  url: string
  /**
   * upstash driver: the REST token, sent as `Authorization: Bearer <token>`. A secret: it stays
   * in the private runtime config. When empty, `UPSTASH_REDIS_REST_TOKEN` from the environment of
   * the server.
   * @default ''
   */
  token: string
  /** redis driver: host. @default '127.0.0.1' */
  host: string
  /** redis driver: port. @default 6379 */
  port: number
  /** redis driver: password. @default '' */
  password: string
  /** redis driver: database index (a cluster has only 0). @default 0 */
  db: number
  /**
   * redis driver: TLS for `host`/`port`, Sentinel (the sentinels and the master) and Cluster
   * (every node) connections; a `rediss://` URL turns it on by itself. The server certificate is
   * always checked, against the system's CAs or `tlsCa`.
   * @default false
   */
  tls: boolean
  /**
   * redis driver: PEM of the CA that signed the Redis server's certificate, for servers with a
   * private CA (with `tls: true` or a `rediss://` URL). Literal `\n` sequences are read as line
   * breaks, so that the PEM fits in one environment variable.
   * @default ''
   */
  tlsCa: string
  /**
   * redis driver: host name the server certificates are checked against (TLS SNI), instead of
   * the address connected to. For servers reached by IP address, e.g. the master a sentinel
   * names or the nodes a cluster announces, whose certificate carries a DNS name. Applies to
   * every TLS connection.
   * @default ''
   */
  tlsServername: string
  /**
   * redis driver, Sentinel: the sentinels to ask for the current master (`password` and `db`
   * are the master's, `tls` applies to both). When set, `host` and `port` are not used; setting
   * `url` or `cluster` too is a configuration error. From the environment: a JSON array
   * (`'[{"host":"sentinel-1","port":26379}]'`).
   * @default []
   */
  sentinels: RedisNode[]
  /** redis driver, Sentinel: name of the master group the sentinels watch. @default 'mymaster' */
  sentinelName: string
  /** redis driver, Sentinel: password of the sentinels, when they require one. @default '' */
  sentinelPassword: string
  /**
   * redis driver, Cluster: some nodes of the cluster (the others are discovered). When set,
   * `host` and `port` are not used; `password` and `tls` apply to every node; setting `url`,
   * `sentinels` or a `db` other than 0 too is a configuration error. From the environment: a JSON
   * array (`'[{"host":"redis-0","port":6379}]'`).
   * @default []
   */
  cluster: RedisNode[]
}

/** A Redis server (Sentinel or Cluster node). */
export interface RedisNode {
  host: string
  port: number
}

export interface RefreshEncryptionOptions {
  /**
   * Encrypt the stored refresh token records (user object included) at rest.
   * @default false
   */
  enabled: boolean
  /**
   * Encryption key, 32 characters or more. Required when enabled.
   * @default ''
   */
  key: string
  /**
   * Previous encryption keys: records sealed with them stay readable until they expire, while
   * everything new is sealed with `key`. Remove one once the refresh lifetime has passed since
   * it was replaced (see the key rotation runbook in docs/deploying.md).
   * @default []
   */
  previousKeys: string[]
  /** @default 'aes-256-gcm' */
  algorithm: 'aes-256-gcm'
}

export interface TokenRefreshOptions {
  /**
   * Issue refresh tokens (cookie + storage) on POST /auth/token.
   * @default true
   */
  enabled: boolean
  /**
   * Client helper refreshes and retries once on a 401.
   * @default true
   */
  automaticRefresh: boolean
  /**
   * Lifetime of the per-request SSR access token.
   * @default '5m'
   */
  ssrTokenExpiry: Duration
  /**
   * How long (seconds or a duration string) a refresh token that was just rotated is still accepted (tabs that
   * refresh at the same moment, a retry after a lost answer). Such a use gets the same successor
   * refresh token as the first one, so a session never has two live tokens. Any later use is
   * treated as theft and revokes the whole session. 0: only the first use succeeds.
   * @default 10
   */
  reuseGracePeriod: Duration
  cookie: RefreshCookieOptions
  storage: RefreshStorageOptions
  encryption: RefreshEncryptionOptions
}
