const SPLITTERS = new Set(['-', '_', '/', '.'])

/** Upper case: true, lower case: false, digits and the like: undefined. */
function caseOf(char: string): boolean | undefined {
  if (/\d/.test(char)) return undefined
  return char !== char.toLowerCase()
}

/**
 * Words of a key as Nitro's runtime-config environment names split it: at `-`, `_`, `/`, `.`, where
 * a lower-case letter meets an upper-case one (`clientSecret`), and before the last capital of a
 * run followed by lower case (`IDPName` → `IDP`, `Name`).
 */
function words(key: string): string[] {
  const parts: string[] = []
  let buffer = ''
  let previousUpper: boolean | undefined
  let started = false
  for (const char of key) {
    if (SPLITTERS.has(char)) {
      parts.push(buffer)
      buffer = ''
      previousUpper = undefined
      continue
    }
    const upper = caseOf(char)
    if (started && previousUpper === false && upper === true) {
      parts.push(buffer)
      buffer = char
    }
    else if (started && previousUpper === true && upper === false && buffer.length > 1) {
      parts.push(buffer.slice(0, -1))
      buffer = buffer.slice(-1) + char
    }
    else {
      buffer += char
    }
    previousUpper = upper
    started = true
  }
  parts.push(buffer)
  return parts
}

/**
 * The environment variable that overrides a key of the module's private runtime config, e.g.
 * `['providers', 'custom', 'my-idp', 'clientSecret']` → `NUXT_SVC_AUTH_PROVIDERS_CUSTOM_MY_IDP_CLIENT_SECRET`.
 */
export function runtimeEnvName(path: string[]): string {
  return `NUXT_${words(['svcAuth', ...path].join('_')).join('_').toUpperCase()}`
}
