/** The module options a built app runs with, resolved as the module and the server do, without building it. */
import { loadNuxtConfig } from '@nuxt/kit'
import { defu } from 'defu'
import { resolveOptions } from '../build/resolve-options'
import { buildRuntimeConfig } from '../build/runtime-config'
import type { ModuleOptions, ModuleOptionsInput } from '../runtime/types/options'
import { applyEnvOverrides, type EnvironmentVariables } from './env'

/** Where the options come from. */
export interface AuthOptionsSource {
  /**
   * Root directory of the app whose `nuxt.config` is read; ignored when `config` is given.
   * @default process.cwd()
   */
  rootDir?: string
  /**
   * Module options to use instead of reading `nuxt.config`, written as under `svcAuth`.
   * @default undefined (read nuxt.config)
   */
  config?: ModuleOptionsInput
  /**
   * Environment whose `NUXT_SVC_AUTH_*` variables override the options (`{}`: ignore it).
   * @default process.env
   */
  env?: EnvironmentVariables
  /** Resolve the options as for `nuxi dev`. @default false */
  dev?: boolean
}

/** What of an app's configuration the options come from. */
export interface AuthConfigInput {
  /** The `svcAuth` key of nuxt.config. */
  svcAuth?: ModuleOptionsInput
  /** `ssr` of nuxt.config (the default of `enableSSR`). @default true */
  ssr?: boolean
  /** `runtimeConfig.svcAuth` of nuxt.config, which the module's values go under. */
  runtimeSvcAuth?: object
}

/** The private runtime config of the module for an app's configuration, environment applied. */
export function runtimeAuthOptions(input: AuthConfigInput, { env = process.env, dev = false }: { env?: EnvironmentVariables, dev?: boolean } = {}): ModuleOptions {
  const options = resolveOptions(input.svcAuth, input.ssr ?? true)
  const merged = defu(input.runtimeSvcAuth, buildRuntimeConfig(options, { dev }).private) as ModuleOptions
  const runtime = { svcAuth: structuredClone(merged) as unknown as Record<string, unknown> }
  return applyEnvOverrides(runtime, env).svcAuth as unknown as ModuleOptions
}

/** The parts of a loaded nuxt.config the helpers read. */
export interface AppConfigView {
  svcAuth?: ModuleOptionsInput
  ssr?: boolean
  app?: { baseURL?: string }
  runtimeConfig?: { svcAuth?: object }
}

/** The module options and the base URL of an app's resolved nuxt.config. */
export function appAuthConfig(config: AppConfigView, { env = process.env, dev = false }: { env?: EnvironmentVariables, dev?: boolean } = {}): { options: ModuleOptions, baseURL: string } {
  const options = runtimeAuthOptions({ svcAuth: config.svcAuth, ssr: config.ssr, runtimeSvcAuth: config.runtimeConfig?.svcAuth }, { env, dev })
  return { options, baseURL: config.app?.baseURL || '/' }
}

/** The module options and the base URL an app runs with (see {@link loadAuthOptions}). */
export async function loadAppAuthConfig(source: AuthOptionsSource = {}): Promise<{ options: ModuleOptions, baseURL: string }> {
  const { env = process.env, dev = false } = source
  if (source.config) return { options: runtimeAuthOptions({ svcAuth: source.config }, { env, dev }), baseURL: '/' }
  const nuxtConfig = await loadNuxtConfig({ cwd: source.rootDir ?? process.cwd(), overrides: { dev } })
  return appAuthConfig(nuxtConfig as unknown as AppConfigView, { env, dev })
}

/** The module options an app runs with: its `nuxt.config` (or `config`), defaults, then the environment. */
export async function loadAuthOptions(source: AuthOptionsSource = {}): Promise<ModuleOptions> {
  return (await loadAppAuthConfig(source)).options
}
