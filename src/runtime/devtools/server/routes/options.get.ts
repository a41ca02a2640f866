/**
 * GET /__svc_auth__/devtools/options (development only, guarded by `defineDevtoolsRoute`): the resolved options,
 * secrets as `•••`, and the mock users → `{ options, mockUsers: [{ index, sub, email?, name? }], endpoints }`.
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
