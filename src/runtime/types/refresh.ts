/** Options of the refresh token: its cookie, storage and encryption (`svcAuth.tokenRefresh`). */

import type { Duration } from './time-span'

export type StorageDriverName = 'fs' | 'redis' | 'memory' | 'upstash'
export type SameSite = 'lax' | 'strict' | 'none'

export interface RefreshCookieOptions {
  /** @default 'svc-refresh' */
  cookieName: string
  /** Cookie and refresh token lifetime. @default 604800 */
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
  /** Storage driver: `fs`, `memory`, `redis`, or `upstash` (Redis over HTTP, for serverless and Workers). @default 'fs' */
  driver: StorageDriverName
  /** Key prefix of every record. @default 'refresh:' */
  prefix: string
  /** fs: directory of the records. @default './.data/refresh-tokens' */
  base: string
  /** redis: connection URL (wins over host/port); upstash: REST URL, else `UPSTASH_REDIS_REST_URL`. @default '' */
  url: string
  /** upstash: REST token (a secret), else `UPSTASH_REDIS_REST_TOKEN`. @default '' */
  token: string
  /** redis: host. @default '127.0.0.1' */
  host: string
  /** redis: port. @default 6379 */
  port: number
  /** redis: password. @default '' */
  password: string
  /** redis: database index (a cluster has only 0). @default 0 */
  db: number
  /** redis: TLS for every connection (a `rediss://` URL turns it on); certificates are always checked. @default false */
  tls: boolean
  /** redis: PEM of a private CA of the server's certificate (`\n` read as line breaks). @default '' */
  tlsCa: string
  /** redis: host name the certificates are checked against (SNI), for servers reached by IP. @default '' */
  tlsServername: string
  /** redis Sentinel: the sentinels that name the master (instead of host/port; env: a JSON array). @default [] */
  sentinels: RedisNode[]
  /** redis Sentinel: name of the master group. @default 'mymaster' */
  sentinelName: string
  /** redis Sentinel: password of the sentinels. @default '' */
  sentinelPassword: string
  /** redis Cluster: some nodes of the cluster (instead of host/port; env: a JSON array). @default [] */
  cluster: RedisNode[]
}

/** A Redis server (Sentinel or Cluster node). */
export interface RedisNode {
  host: string
  port: number
}

export interface RefreshEncryptionOptions {
  /** Encrypt the stored refresh token records at rest. @default false */
  enabled: boolean
  /** Encryption key, 32 characters or more; required when enabled. @default '' */
  key: string
  /** Previous keys: what they sealed stays readable until it expires (docs/deploying.md). @default [] */
  previousKeys: string[]
  /** @default 'aes-256-gcm' */
  algorithm: 'aes-256-gcm'
}

export interface TokenRefreshOptions {
  /** Issue refresh tokens (cookie + storage) on POST /auth/token. @default true */
  enabled: boolean
  /** Client helper refreshes and retries once on a 401. @default true */
  automaticRefresh: boolean
  /** Lifetime of the per-request SSR access token. @default '5m' */
  ssrTokenExpiry: Duration
  /** How long a just-rotated refresh token still gets the same successor; later use revokes the session. @default 10 */
  reuseGracePeriod: Duration
  cookie: RefreshCookieOptions
  storage: RefreshStorageOptions
  encryption: RefreshEncryptionOptions
}
