import type { ConnectionOptions } from 'node:tls'
import type { RedisOptions } from 'unstorage/drivers/redis'
import type { RedisNode } from '../../../types/options'

/** Connection options of the Redis backend: a Cluster, else Sentinel, else one server (`url` wins over host/port). */
export interface RedisBackendOptions {
  url?: string
  host?: string
  port?: number
  password?: string
  db?: number
  /** TLS for host/port, Sentinel (sentinels and master) and Cluster connections (`rediss://` URLs have it already). */
  tls?: boolean
  /** PEM of a private CA that signed the server certificate (literal `\n` read as line breaks). */
  tlsCa?: string
  /** Host name the server certificates are checked against instead of the address connected to. */
  tlsServername?: string
  sentinels?: RedisNode[]
  sentinelName?: string
  sentinelPassword?: string
  cluster?: RedisNode[]
  /** Not supported: keys are used verbatim (callers prefix them). */
  keyPrefix?: never
}

/** Cluster nodes are connected to by the names given, so that their certificates match (not by resolved address). */
function keepHostname(hostname: string, callback: (error: null, address: string) => void): void {
  callback(null, hostname)
}

/** What ioredis gets for each topology (the unstorage driver passes it on). */
export function connectionOptions(options: RedisBackendOptions): RedisOptions {
  const ca = options.tlsCa ? options.tlsCa.replace(/\\n/g, '\n') : undefined
  const servername = options.tlsServername || undefined
  const tlsSettings: ConnectionOptions = { ...(ca ? { ca } : {}), ...(servername ? { servername } : {}) }
  const tls = options.tls ? { tls: tlsSettings } : {}
  const password = options.password || undefined
  const cluster = Array.isArray(options.cluster) ? options.cluster : []
  if (cluster.length) {
    return {
      cluster: cluster.map(({ host, port }) => ({ host, port })),
      clusterOptions: { redisOptions: { password, ...tls }, ...(options.tls ? { dnsLookup: keepHostname } : {}) },
    }
  }
  const sentinels = Array.isArray(options.sentinels) ? options.sentinels : []
  if (sentinels.length) {
    return {
      sentinels: sentinels.map(({ host, port }) => ({ host, port })),
      name: options.sentinelName || 'mymaster',
      sentinelPassword: options.sentinelPassword || undefined,
      password,
      db: options.db ?? 0,
      ...tls,
      // TLS to the sentinels as well as to the master they name.
      ...(options.tls ? { enableTLSForSentinelMode: true, sentinelTLS: tlsSettings } : {}),
    }
  }
  // ioredis turns TLS on for rediss:// by itself; a private CA or a server name is added to it.
  if (options.url) {
    const rediss = /^rediss:/i.test(options.url)
    return { url: options.url, ...(rediss && (ca || servername) ? { tls: tlsSettings } : tls) }
  }
  return {
    host: options.host || '127.0.0.1',
    port: options.port || 6379,
    password,
    db: options.db ?? 0,
    ...tls,
  }
}
