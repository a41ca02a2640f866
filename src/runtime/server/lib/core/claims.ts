import type { ClaimValue, CustomClaims, JsonPrimitive } from '../../../types/auth'
import { subjectOf, type SubjectSource } from './subject'
import { nonEmptyString } from '../../../shared/values'

/** Claims that custom claims may never set: the token service and the session own them. */
export const RESERVED_CLAIMS = ['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti', 'typ', 'sid', 'impersonation'] as const

/** Claims taken from the user record (or the login provider), never from custom claims. */
const IDENTITY_CLAIMS = ['sub', 'email', 'name', 'picture', 'provider'] as const

/** Keys that would touch the prototype chain of a plain object when assigned. */
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

const RESERVED_SET: ReadonlySet<string> = new Set(RESERVED_CLAIMS)
const IGNORED_IN_ACCESS_CLAIMS: ReadonlySet<string> = new Set([...RESERVED_CLAIMS, ...IDENTITY_CLAIMS])

type Checked = { ok: true, value: ClaimValue } | { ok: false, reason: string }

function isJsonPrimitive(value: unknown): value is JsonPrimitive {
  return value === null
    || typeof value === 'string'
    || typeof value === 'boolean'
    || (typeof value === 'number' && Number.isFinite(value))
}

/** Dense array of JSON primitives (holes count as invalid, unlike `Array.prototype.every`). */
function isPrimitiveArray(value: unknown): value is JsonPrimitive[] {
  if (!Array.isArray(value)) {
    return false
  }
  for (let i = 0; i < value.length; i++) {
    if (!isJsonPrimitive(value[i])) {
      return false
    }
  }
  return true
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return false
  }
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

function describeRejectedValue(value: unknown): string {
  if (typeof value === 'number') {
    return 'non-finite number'
  }
  if (Array.isArray(value)) {
    return 'array with non-primitive items'
  }
  if (typeof value === 'object' && value !== null) {
    return isPlainObject(value) ? 'nested object deeper than one level' : 'not a plain object'
  }
  return `unsupported type ${typeof value}`
}

function checkObjectClaim(value: Record<string, unknown>): Checked {
  const copy: Record<string, JsonPrimitive | JsonPrimitive[]> = {}
  for (const key of Object.keys(value)) {
    const member = value[key]
    if (UNSAFE_KEYS.has(key)) {
      return { ok: false, reason: `unsafe key "${key}" inside object` }
    }
    if (isJsonPrimitive(member)) {
      copy[key] = member
    }
    else if (isPrimitiveArray(member)) {
      copy[key] = [...member]
    }
    else if (member !== undefined) {
      return { ok: false, reason: `object member "${key}": ${describeRejectedValue(member)}` }
    }
  }
  return { ok: true, value: copy }
}

function checkClaimValue(value: unknown): Checked {
  if (isJsonPrimitive(value)) {
    return { ok: true, value }
  }
  if (isPrimitiveArray(value)) {
    return { ok: true, value: [...value] }
  }
  if (isPlainObject(value)) {
    return checkObjectClaim(value)
  }
  return { ok: false, reason: describeRejectedValue(value) }
}

/** Copies the JSON-safe custom claims (objects one level deep); reserved claims and others go to `onDrop`. */
export function sanitizeCustomClaims(
  input: unknown,
  onDrop?: (key: string, reason: string) => void,
): CustomClaims {
  const result: CustomClaims = {}
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return result
  }
  const source = input as Record<string, unknown>
  for (const key of Object.keys(source)) {
    if (RESERVED_SET.has(key)) {
      onDrop?.(key, 'reserved claim')
      continue
    }
    if (UNSAFE_KEYS.has(key)) {
      onDrop?.(key, 'unsafe key')
      continue
    }
    const checked = checkClaimValue(source[key])
    if (checked.ok) {
      result[key] = checked.value
    }
    else {
      onDrop?.(key, checked.reason)
    }
  }
  return result
}

function assignIfString(target: Record<string, unknown>, key: string, value: unknown): void {
  if (typeof value === 'string') {
    target[key] = value
  }
}

/** Claims of an access token for `user`: custom claims, then identity claims; throws when there is no subject. */
export function buildAccessClaims(
  user: SubjectSource & { email?: string, name?: string, picture?: string },
  provider: string | undefined,
  custom: CustomClaims,
  extra?: { sid?: string, impersonation?: unknown },
): Record<string, unknown> {
  const sub = subjectOf(user)
  if (sub === undefined) {
    throw new Error('Cannot build access token claims: the user has no "sub" or "id"')
  }
  const claims: Record<string, unknown> = {}
  for (const key of Object.keys(custom ?? {})) {
    if (!IGNORED_IN_ACCESS_CLAIMS.has(key) && !UNSAFE_KEYS.has(key)) {
      claims[key] = custom[key]
    }
  }
  claims.sub = sub
  assignIfString(claims, 'email', user.email)
  assignIfString(claims, 'name', user.name)
  assignIfString(claims, 'picture', user.picture)
  assignIfString(claims, 'provider', nonEmptyString(provider))
  assignIfString(claims, 'sid', nonEmptyString(extra?.sid))
  if (extra?.impersonation !== undefined) {
    claims.impersonation = extra.impersonation
  }
  return claims
}
