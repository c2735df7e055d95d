import { PersonAccess } from '../../application/identity/person-access';
import type { VersionedGroupMappings } from '../../core/group-mappings';
import { AppError } from '../../core/errors';

const version = (mappings: VersionedGroupMappings['mappings']): VersionedGroupMappings => ({ version: 1, mappings, created_at: 1, actor: 'key_a' });
const access = new PersonAccess({
  mappings: {
    current: () =>
      Promise.resolve(
        new Map([
          ['org_b', version([{ group: 'netops', roles: ['analyst'] }, { group: 'leads', roles: ['approver'] }])],
          ['org_a', version([{ group: 'netops', roles: ['operator'] }])],
          ['org_c', version([{ group: 'finance', roles: ['admin'] }])],
        ]),
      ),
  },
});

const failure = async (work: Promise<unknown>) => {
  try {
    await work;
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected a refusal');
};

describe('person access', () => {
  it('gives a person every workspace where one of their groups is mapped, with the union of its roles', async () => {
    expect(await access.workspacesOf(['netops', 'leads', 'unmapped'])).toEqual([
      { orgId: 'org_a', roles: ['operator'] },
      { orgId: 'org_b', roles: ['analyst', 'approver'] },
    ]);
  });

  it('picks the only workspace a person holds when none is named', async () => {
    expect(await access.accessIn(['finance'], undefined)).toEqual({ orgId: 'org_c', roles: ['admin'] });
  });

  it('refuses with 400 naming the header a person of several workspaces who names none', async () => {
    const err = await failure(access.accessIn(['netops'], undefined));
    expect(err.status).toBe(400);
    expect(err.details).toEqual([expect.objectContaining({ path: 'X-Nettel-Workspace' })]);
  });

  it('refuses with 403 a named workspace where the person holds no role', async () => {
    expect((await failure(access.accessIn(['netops'], 'org_c'))).status).toBe(403);
  });

  it('refuses with 403 a person whose groups are mapped nowhere', async () => {
    expect((await failure(access.accessIn(['nobody'], undefined))).status).toBe(403);
  });
});
