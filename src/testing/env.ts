/**
 * The environment overrides of the runtime config as the built server applies them (`NITRO_`, else `NUXT_`
 * prefix; objects merged; existing keys only), checked against Nitro's `applyEnv` in the unit tests.
 */
import { snakeCase } from 'scule'
import { parseEnvValue } from '../build/deploy-target'
import { isRecord } from '../runtime/shared/values'

export { parseEnvValue }

/** Environment variables, as `process.env`. */
export type EnvironmentVariables = Record<string, string | undefined>

const PREFIX = 'NITRO_'
const ALT_PREFIX = 'NUXT_'

function envValue(env: EnvironmentVariables, key: string): unknown {
  const name = snakeCase(key).toUpperCase()
  return parseEnvValue(env[PREFIX + name] ?? env[ALT_PREFIX + name])
}

/** Overrides the keys of `target` (a runtime config, or part of one under `parentKey`) from `env`, in place. */
export function applyEnvOverrides<T extends Record<string, unknown>>(target: T, env: EnvironmentVariables, parentKey = ''): T {
  const object = target as Record<string, unknown>
  for (const key of Object.keys(object)) {
    const path = parentKey ? `${parentKey}_${key}` : key
    const override = envValue(env, path)
    const current = object[key]
    if (isRecord(current)) {
      // As in Nitro, `null` counts as an (empty) object here: the keys below are still read.
      if (isRecord(override) || override === null) {
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
