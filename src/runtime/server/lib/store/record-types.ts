/**
 * A kind of record, by the namespace that starts its storage keys (`<prefix><namespace>:<hmac(id)>`),
 * declared with {@link recordTypes} by the module that owns it (test/unit/record-types.test.ts
 * checks the names are unique).
 */
export type RecordType = string & { readonly __recordType: true }

/** Declares record kinds: `{ name: 'namespace' }`, each namespace lowercase words joined by `-`. */
export function recordTypes<const T extends Record<string, string>>(types: T): { readonly [K in keyof T]: RecordType & T[K] } {
  return types as { readonly [K in keyof T]: RecordType & T[K] }
}
