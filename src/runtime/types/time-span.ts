/** Duration: a number of seconds, or a string such as `'90s'`, `'5m'`, `'1h'`, `'7d'` (every option that is a time span). */
export type Duration = string | number

/** Options as the server reads them once they are checked: every {@link Duration} a number (of seconds). */
export type Parsed<T> = [T] extends [Duration] ? ([Duration] extends [T] ? number : T)
  : T extends (...args: never[]) => unknown ? T : T extends object ? { [K in keyof T]: Parsed<T[K]> } : T
