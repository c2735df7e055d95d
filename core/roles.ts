/**
 * Roles and what each may do. The platform admin (ADMIN_API_KEY) is not a
 * role of a workspace: it mints workspaces and keys, and holds no org.
 */
export const roles = ['admin', 'operator', 'analyst', 'approver', 'ingest'] as const;
export type Role = (typeof roles)[number];

export const permissions = [
  'keys:manage',
  'telemetry:write',
  'read',
  'policies:manage',
  'replays:run',
  'approve',
  'incidents:manage',
  'audit:read',
  'exporters:manage',
  'webhooks:manage',
  'rules:manage',
  'prefixes:manage',
  'playbooks:manage',
  'views:manage',
] as const;
export type Permission = (typeof permissions)[number];

/**
 * `approve` and `policies:manage` never come together in one role (issue 21):
 * whoever writes the policies that gate runs is not who approves them. Admin
 * holds everything else; approving takes an approver role (docs/governance.md,
 * "Roles"). prefixes:manage is admin's alone: the prefixes a workspace
 * declares bound what its mitigations may announce.
 */
const grants: Record<Role, readonly Permission[]> = {
  admin: permissions.filter((p) => p !== 'approve'),
  operator: ['telemetry:write', 'read', 'policies:manage', 'replays:run', 'incidents:manage', 'audit:read', 'exporters:manage', 'webhooks:manage', 'rules:manage', 'playbooks:manage', 'views:manage'],
  // Analysts build the views the workspace shares (issue 34): saving one is the one write they have.
  analyst: ['read', 'views:manage'],
  approver: ['read', 'approve', 'audit:read'],
  ingest: ['telemetry:write'],
};

export const defaultRole: Role = 'operator';

export function roleAllows(role: Role, permission: Permission): boolean {
  return grants[role].includes(permission);
}

/** Whether any of `roles` grants `permission`: a person signed in may hold several roles in one workspace. */
export function rolesAllow(held: readonly Role[], permission: Permission): boolean {
  return held.some((role) => roleAllows(role, permission));
}

/** Every permission any of `held` grants, in the order of `permissions`. */
export function permissionsOfRoles(held: readonly Role[]): Permission[] {
  return permissions.filter((p) => rolesAllow(held, p));
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (roles as readonly string[]).includes(value);
}

/** Every permission a role holds, in the order of `permissions`. */
export function permissionsOf(role: Role): Permission[] {
  return permissions.filter((p) => grants[role].includes(p));
}
