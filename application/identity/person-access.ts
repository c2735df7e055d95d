import { forbidden, validationError } from '../../core/errors';
import { rolesOfGroups } from '../../core/group-mappings';
import type { Role } from '../../core/roles';
import type { CurrentMappingsSource } from './group-mappings-service';

/** A workspace a person holds roles in, and those roles. */
export interface WorkspaceAccess {
  orgId: string;
  roles: Role[];
}

/** The header a person's bearer token names its workspace in, when the person holds several. */
export const workspaceHeader = 'X-Nettel-Workspace';

/**
 * Turns a verified person's groups into the workspaces and roles they hold,
 * through every workspace's group mappings in force. Groups are compared
 * exactly as the provider sends them. A workspace maps nobody until its
 * admin maps a group: holding a group alone grants nothing.
 */
export class PersonAccess {
  constructor(private readonly deps: { mappings: CurrentMappingsSource }) {}

  /** Every workspace the groups hold a role in, by org id. */
  async workspacesOf(groups: readonly string[]): Promise<WorkspaceAccess[]> {
    const held = new Set(groups);
    const access: WorkspaceAccess[] = [];
    for (const [orgId, current] of await this.deps.mappings.current()) {
      const roles = rolesOfGroups(current.mappings, held);
      if (roles.length > 0) access.push({ orgId, roles });
    }
    return access.sort((a, b) => (a.orgId < b.orgId ? -1 : a.orgId > b.orgId ? 1 : 0));
  }

  /**
   * The workspace a request acts in: the one chosen (`chosen`, named by
   * `choiceName` in errors), or the only one the person holds. Several and
   * none chosen is 400 naming the choice; a chosen one where the person holds
   * no role, or none at all, is 403.
   */
  async accessIn(groups: readonly string[], chosen: string | undefined, choiceName = workspaceHeader): Promise<WorkspaceAccess> {
    const workspaces = await this.workspacesOf(groups);
    if (chosen !== undefined) {
      const found = workspaces.find((w) => w.orgId === chosen);
      if (!found) throw forbidden(`you hold no role in workspace ${chosen}: no group of yours is mapped there`);
      return found;
    }
    if (workspaces.length === 1) return workspaces[0]!;
    if (workspaces.length === 0) throw forbidden('you hold no role in any workspace: no group of yours is mapped to one (ask a workspace admin to map it)');
    throw validationError(`you hold roles in ${workspaces.length} workspaces: name one in ${choiceName}`, [
      { path: choiceName, message: `required: one of ${workspaces.map((w) => w.orgId).join(', ')}` },
    ]);
  }
}
