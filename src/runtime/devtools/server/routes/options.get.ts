/**
 * GET /__svc_auth__/devtools/options (development only)
 * Header `x-svc-auth-devtools: 1`, from a loopback address to a loopback host. The resolved
 * options (the private runtime config, environment overrides applied) with every secret shown
 * as `•••`, and the mock users to switch between:
 * `{ options, mockUsers: [{ index, sub, email?, name? }], endpoints }`.
 * 403 forbidden (another machine, host or site; no header)
 */
import { useRuntimeConfig } from 'nitropack/runtime'
import type { ModuleOptions } from '../../../types/options'
import { maskOptions, redactString } from '../redact'
import { defineDevtoolsRoute } from '../devtools-http'

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value ? redactString(value) : undefined
}

export default defineDevtoolsRoute((event) => {
  const options = useRuntimeConfig(event).svcAuth as unknown as ModuleOptions
  const users = options.providers?.mock?.mockUsers
  const mockUsers = (Array.isArray(users) ? users : []).map((user, index) => ({ index, sub: text(user.sub) ?? '', email: text(user.email), name: text(user.name) }))
  return { options: maskOptions(options), mockUsers, endpoints: options.endpoints }
}, { json: true })
