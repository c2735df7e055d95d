import { z } from 'zod';
import { roles, type Role } from './roles';

/**
 * A workspace's single sign-on group mappings: which of the provider's
 * groups hold which of the workspace's roles. Versions are immutable: a
 * change writes the next one; version 0 (nothing set) maps no group, so no
 * person holds anything in a workspace until its admin maps a group.
 */
export interface GroupMapping {
  /** The group as the provider names it in the groups claim (a name, or an id as Entra ID sends). */
  group: string;
  roles: Role[];
}

export interface VersionedGroupMappings {
  version: number;
  mappings: GroupMapping[];
  /** Epoch milliseconds; 0 for version 0. */
  created_at: number;
  /** Who wrote it (a key id or a person's principal id); empty for version 0. */
  actor: string;
}

export const maxGroupMappings = 1_000;

export const groupMappingSchema = z
  .object({
    group: z.string().min(1).max(256),
    roles: z.array(z.enum(roles)).min(1).max(roles.length),
  })
  .strict();

/** The mappings a PUT gives: each group once, each role of it once. */
export const groupMappingsSchema = z
  .array(groupMappingSchema)
  .max(maxGroupMappings)
  .superRefine((mappings, ctx) => {
    const seen = new Set<string>();
    mappings.forEach((mapping, index) => {
      if (seen.has(mapping.group)) ctx.addIssue({ code: 'custom', path: [index, 'group'], message: `group ${mapping.group} is mapped twice: give it once with all its roles` });
      seen.add(mapping.group);
      if (new Set(mapping.roles).size !== mapping.roles.length) ctx.addIssue({ code: 'custom', path: [index, 'roles'], message: 'a role is named twice' });
    });
  });

export const noMappings: VersionedGroupMappings = { version: 0, mappings: [], created_at: 0, actor: '' };

/** The newest of a workspace's versions, version 0 when none is stored. */
export function currentOf(versions: readonly VersionedGroupMappings[]): VersionedGroupMappings {
  return versions.reduce((newest, v) => (v.version > newest.version ? v : newest), noMappings);
}

/** The roles a person in these groups holds under these mappings, in the order of `roles` (none: an empty list). */
export function rolesOfGroups(mappings: readonly GroupMapping[], groups: ReadonlySet<string>): Role[] {
  const held = new Set<Role>();
  for (const mapping of mappings) {
    if (groups.has(mapping.group)) for (const role of mapping.roles) held.add(role);
  }
  return roles.filter((role) => held.has(role));
}

/** Mappings as stored: parsed again on read, so a row written by hand or an older release cannot grant an unknown role. */
export function parseStoredMappings(text: string): GroupMapping[] {
  return z.array(groupMappingSchema).parse(JSON.parse(text));
}
