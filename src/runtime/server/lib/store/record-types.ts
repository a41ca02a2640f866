/** A kind of record, by the namespace of its keys (`<prefix><namespace>:<hmac(id)>`), declared with {@link recordTypes}. */
export type RecordType = string & { readonly __recordType: true }

/** Declares record kinds: `{ name: 'namespace' }`, each namespace lowercase words joined by `-`. */
export function recordTypes<const T extends Record<string, string>>(types: T): { readonly [K in keyof T]: RecordType & T[K] } {
  return types as { readonly [K in keyof T]: RecordType & T[K] }
}
