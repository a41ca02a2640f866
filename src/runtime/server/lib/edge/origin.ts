/** The origin (`scheme://host[:port]`) of a URL, or undefined for anything that is not http(s). */
export function originOf(value: string): string | undefined {
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined
  }
  catch {
    return undefined
  }
}
