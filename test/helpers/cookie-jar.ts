/**
 * A browser's cookie jar for tests that talk HTTP: what responses set is kept (a cookie set to an
 * empty value is deleted, as a browser does when a server clears one) and sent back.
 */
export class CookieJar extends Map<string, string> {
  /** Keeps the cookies `res` sets. */
  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair!.indexOf('=')
      const name = pair!.slice(0, eq).trim()
      const value = pair!.slice(eq + 1)
      if (value) this.set(name, value)
      else this.delete(name)
    }
  }

  /** The `Cookie` request header of the jar ('' when empty). */
  header(): string {
    return [...this].map(([name, value]) => `${name}=${value}`).join('; ')
  }
}

/** A browser for tests: its cookie jar and a GET that follows nothing by itself, on the app at `base()`. */
export function jarBrowser(base: () => string) {
  const jar = new CookieJar()
  const get = async (url: string) => {
    const res = await fetch(new URL(url, base()), { headers: { cookie: jar.header() }, redirect: 'manual' })
    jar.store(res)
    return res
  }
  return { jar, get }
}
