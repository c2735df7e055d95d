import { personOrNull, type Person } from './person';
import type { Role } from './roles';

/** How a workspace principal proved itself: an API key, a person's bearer token (a JWT of the OpenID provider), or a console session. */
export type CredentialKind = 'api_key' | 'bearer' | 'session';
export const credentialKinds: readonly CredentialKind[] = ['api_key', 'bearer', 'session'];

/**
 * Who is calling: the platform admin, or a credential of one workspace.
 * `roles` holds a key's one role, or every role a signed-in person holds in
 * the workspace through their groups. `person` is null for a service key.
 * `keyId` names the credential (a key's id, or an id the sign-in chooses,
 * such as `session:<id>`): audit entries name it as their actor.
 */
export type Principal =
  | { kind: 'platform_admin'; keyId: 'platform-admin'; person: null }
  | { kind: 'workspace'; keyId: string; orgId: string; roles: readonly Role[]; person: Person | null; via: CredentialKind };

export type WorkspacePrincipal = Extract<Principal, { kind: 'workspace' }>;

export const platformAdmin: Principal = { kind: 'platform_admin', keyId: 'platform-admin', person: null };

/** Who decides on a run: the credential, the person behind it (null for a service key), and how the API authenticated it; a decision token signs all three. */
export interface Approver {
  approverKeyId: string;
  approverPerson: Person | null;
  approverVia: CredentialKind;
}

/** The approver a principal the API authenticated is. */
export function approverOfPrincipal(by: Principal): Approver {
  return { approverKeyId: by.keyId, approverPerson: by.person, approverVia: by.kind === 'workspace' ? by.via : 'api_key' };
}

/**
 * The approver a decision or change names, read defensively: a raw signal may
 * carry anything. Bounded as the API bounds them (no credential id is that
 * long); a sender that names no person or credential kind is read as a
 * service key, and its token, signed for what the API authenticated, then
 * fails to verify.
 */
export function approverFrom(raw: unknown): Approver {
  const a = (typeof raw === 'object' && raw !== null ? raw : {}) as Partial<Record<keyof Approver, unknown>>;
  return {
    approverKeyId: typeof a.approverKeyId === 'string' && a.approverKeyId.length <= 200 ? a.approverKeyId : '',
    approverPerson: personOrNull(a.approverPerson),
    approverVia: credentialKinds.includes(a.approverVia as CredentialKind) ? (a.approverVia as CredentialKind) : 'api_key',
  };
}
