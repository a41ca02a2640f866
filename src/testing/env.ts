/**
 * The environment overrides of the runtime config as the built server applies them (`NITRO_`, else `NUXT_`
 * prefix; values parsed like Nitro; objects merged; existing keys only). Checked against Nitro's `applyEnv`
 * in test/unit/testing-options.test.ts.
 */
import { snakeCase } from 'scule'

/** Environment variables, as `process.env`. */
export type EnvironmentVariables = Record<string, string | undefined>

const PREFIX = 'NITRO_'
const ALT_PREFIX = 'NUXT_'
const JSON_SIGNATURE = /^\s*["[{]|^\s*-?\d{1,16}(?:\.\d{1,17})?(?:e[+-]?\d+)?\s*$/i
const LITERALS: Record<string, unknown> = { 'true': true, 'false': false, 'undefined': undefined, 'null': null, 'nan': Number.NaN, 'infinity': Number.POSITIVE_INFINITY, '-infinity': Number.NEGATIVE_INFINITY }

/** A JSON reviver that drops keys able to pollute prototypes. */
function dropUnsafeKeys(key: string, value: unknown): unknown {
  if (key === '__proto__' || (key === 'constructor' && typeof value === 'object' && value !== null && 'prototype' in value)) return undefined
  return value
}

/** An environment variable's text as a value: a literal, a number or JSON when it reads as one, else the text. */
export function parseEnvValue(value: string | undefined): unknown {
  if (typeof value !== 'string') return value
  if (value.startsWith('"') && value.endsWith('"') && value.length > 1 && !value.includes('\\')) return value.slice(1, -1)
  const trimmed = value.trim()
  if (trimmed.length <= 9 && Object.hasOwn(LITERALS, trimmed.toLowerCase())) return LITERALS[trimmed.toLowerCase()]
  if (!JSON_SIGNATURE.test(value)) return value
  try {
    return JSON.parse(value, dropUnsafeKeys)
  }
  catch {
    return value
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function envValue(env: EnvironmentVariables, key: string): unknown {
  const name = snakeCase(key).toUpperCase()
  return parseEnvValue(env[PREFIX + name] ?? env[ALT_PREFIX + name])
}

/**
 * Overrides the keys of `target` (a runtime config, or part of one under `parentKey`) from `env`,
 * in place, and returns it.
 */
export function applyEnvOverrides<T extends Record<string, unknown>>(target: T, env: EnvironmentVariables, parentKey = ''): T {
  const object = target as Record<string, unknown>
  for (const key of Object.keys(object)) {
    const path = parentKey ? `${parentKey}_${key}` : key
    const override = envValue(env, path)
    const current = object[key]
    if (isObject(current)) {
      // As in Nitro, `null` counts as an (empty) object here: the keys below are still read.
      if (isObject(override) || override === null) {
        object[key] = applyEnvOverrides({ ...current, ...override }, env, path)
      }
      else if (override === undefined) {
        applyEnvOverrides(current, env, path)
      }
      else {
        object[key] = override ?? current
      }
    }
    else {
      object[key] = override ?? current
    }
  }
  return target
}
