/**
 * A kind of record the module stores, by the namespace that starts its storage keys
 * (`<prefix><namespace>:<hmac(id)>`). The module that owns a kind declares it with
 * {@link recordTypes} (the core's in core/records/core-records.ts, each feature's in its folder), so
 * the store knows none of them; `RecordStore.key` and `namedKey` take only declared names, and
 * test/unit/record-types.test.ts checks that every declared name is unique and that a whole flow
 * stores nothing else.
 */
export type RecordType = string & { readonly __recordType: true }

/** Declares record kinds: `{ name: 'namespace' }`, each namespace lowercase words joined by `-`. */
export function recordTypes<const T extends Record<string, string>>(types: T): { readonly [K in keyof T]: RecordType & T[K] } {
  return types as { readonly [K in keyof T]: RecordType & T[K] }
}
