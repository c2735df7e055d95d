import { forbidden } from '../../core/errors';
import type { Role } from '../../core/roles';
import type { PersonSessionRecord, SessionRecord } from '../../core/session';
import type { KeysService, Principal } from '../keys-service';

/** A workspace a person holds roles in, through the group mappings. */
export interface HeldWorkspace {
  orgId: string;
  roles: Role[];
}

/** The group mappings, as person-access reads them (cached a few seconds). */
export interface PersonWorkspaces {
  workspacesOf(groups: readonly string[]): Promise<HeldWorkspace[]>;
}

/**
 * Who a session acts as, resolved again on every request: a key session is
 * the key (refused once it is revoked or expired), a person's session holds
 * the roles their groups map to in the chosen workspace now, so a group
 * removed from a mapping takes effect within the mappings' cache time.
 */
export class SessionPrincipals {
  constructor(private readonly deps: { keys: Pick<KeysService, 'principalOfKey'>; access: PersonWorkspaces }) {}

  /** The workspaces a person in these groups holds roles in. */
  workspacesOfGroups(groups: readonly string[]): Promise<HeldWorkspace[]> {
    return this.deps.access.workspacesOf(groups);
  }

  /** The workspaces a session may choose from (a key session's one). */
  async workspacesOf(record: SessionRecord): Promise<HeldWorkspace[]> {
    if (record.kind === 'person') return this.deps.access.workspacesOf(record.groups);
    const principal = await this.deps.keys.principalOfKey(record.key_id, record.key_check);
    return principal.kind === 'workspace' ? [{ orgId: principal.orgId, roles: [principal.role] }] : [];
  }

  async principalOf(record: SessionRecord): Promise<Principal> {
    if (record.kind === 'key') return this.deps.keys.principalOfKey(record.key_id, record.key_check);
    return this.personPrincipal(record);
  }

  private async personPrincipal(record: PersonSessionRecord): Promise<Principal> {
    if (!record.org_id) throw forbidden('choose a workspace first (POST /auth/workspace)');
    const held = (await this.deps.access.workspacesOf(record.groups)).find((w) => w.orgId === record.org_id);
    if (!held || held.roles.length === 0) throw forbidden(`your groups no longer map to a role in workspace ${record.org_id}`);
    return { kind: 'workspace', keyId: `person:${record.person.subject}`, orgId: held.orgId, role: held.roles[0]! };
  }
}
