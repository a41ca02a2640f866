// The organization roles of the playground (svcAuth.organizations.roles), also read by its pages to
// offer role choices. `project:*` is the playground's own resource: /projects needs `project:write`.
export const ORG_ROLES = {
  owner: ['*'],
  admin: ['org:read', 'org:update', 'member:*', 'invitation:*', 'team:*', 'project:*'],
  developer: ['org:read', 'member:read', 'team:read', 'project:read', 'project:write'],
  member: ['org:read', 'member:read', 'team:read', 'project:read'],
}

export const ORG_ROLE_NAMES = Object.keys(ORG_ROLES)
