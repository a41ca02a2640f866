/**
 * STUB on the org-auth branch, replaced by the merge of the org-store branch (where the store adapter of
 * organizations is written): only its export signature, so that this branch compiles. Every method throws.
 */
import type { OrganizationsAdapter } from '../organization-types'
import type { RecordStore } from '../../server/lib/store/record-store'

/** Organizations, members and teams in the module's store (stub: every method throws). */
export function createStoreOrganizations(_store: RecordStore): OrganizationsAdapter {
  const missing = (): never => {
    throw new Error('[svc-auth] createStoreOrganizations is a stub on this branch: pass defineAuthHandlers({ organizations: { adapter } }).')
  }
  return {
    createOrganization: missing,
    getOrganization: missing,
    updateOrganization: missing,
    deleteOrganization: missing,
    listUserOrganizations: missing,
    getMember: missing,
    listMembers: missing,
    saveMember: missing,
    removeMember: missing,
    listTeams: missing,
    createTeam: missing,
    deleteTeam: missing,
  }
}
