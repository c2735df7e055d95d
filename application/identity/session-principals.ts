import { createHash } from 'node:crypto';
import { forbidden } from '../../core/errors';
import type { Principal } from '../../core/principal';
import type { PersonSessionRecord, SessionRecord } from '../../core/session';
import type { KeysService } from '../keys-service';
import type { WorkspaceAccess } from './person-access';

/** What the sessions need of person-access: the workspaces and roles a person's groups map to now (cached a few seconds). */
export interface PersonWorkspaces {
  workspacesOf(groups: readonly string[]): Promise<WorkspaceAccess[]>;
}

/** A session as the API found it: the browser's id (never shown) and its record. */
export interface SessionHandle {
  id: string;
  record: SessionRecord;
}

/**
 * The credential id a person's session acts under (audit entries name it as
 * their actor): `session:` and the start of the SHA-256 of the browser's id,
 * as the session's entry in the bucket is named, never the id itself.
 */
export const sessionCredentialId = (id: string) => `session:${createHash('sha256').update(id).digest('hex').slice(0, 20)}`;

/**
 * Who a session acts as, resolved again on every request: a key session is
 * the key (refused once it is revoked or expired), a person's session holds
 * the roles their groups map to in the chosen workspace now, so a group
 * removed from a mapping takes effect within the mappings' cache time.
 */
export class SessionPrincipals {
  constructor(private readonly deps: { keys: Pick<KeysService, 'principalOfKey'>; access: PersonWorkspaces }) {}

  /** The workspaces a person in these groups holds roles in. */
  workspacesOfGroups(groups: readonly string[]): Promise<WorkspaceAccess[]> {
    return this.deps.access.workspacesOf(groups);
  }

  /** The workspaces a session may act in (a key session's one; none for the platform admin's). */
  async workspacesOf(record: SessionRecord): Promise<WorkspaceAccess[]> {
    if (record.kind === 'person') return this.deps.access.workspacesOf(record.groups);
    const principal = await this.deps.keys.principalOfKey(record.key_id, record.key_check);
    return principal.kind === 'workspace' ? [{ orgId: principal.orgId, roles: [...principal.roles] }] : [];
  }

  async principalOf(session: SessionHandle): Promise<Principal> {
    const { record } = session;
    if (record.kind === 'key') return this.deps.keys.principalOfKey(record.key_id, record.key_check);
    return this.personPrincipal(session.id, record);
  }

  private async personPrincipal(id: string, record: PersonSessionRecord): Promise<Principal> {
    if (!record.org_id) throw forbidden('choose a workspace first (POST /auth/workspace)');
    const held = (await this.deps.access.workspacesOf(record.groups)).find((w) => w.orgId === record.org_id);
    if (!held) throw forbidden(`you hold no role in workspace ${record.org_id} any more: no group of yours is mapped there`);
    return { kind: 'workspace', keyId: sessionCredentialId(id), orgId: held.orgId, roles: held.roles, person: record.person, via: 'session' };
  }
}
