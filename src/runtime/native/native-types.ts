/**
 * Options of native and other non-browser clients (`svcAuth.native`): setting the key turns the native
 * endpoints on (docs/clients.md).
 */
export interface NativeOptions {
  /**
   * Where a native login may return (RFC 8252), each matched exactly: a private-use scheme
   * (`com.example.app:/callback`), an https URL (a claimed link), or a loopback redirect
   * `http://127.0.0.1/callback` or `http://[::1]/callback`, which matches any port (RFC 8252 §7.3).
   */
  redirectUris: string[]
}
