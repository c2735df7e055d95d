import { permissions, permissionsOfRoles, roleAllows, roles, rolesAllow } from '../../core/roles';

describe('roles', () => {
  test('admin holds every permission but approve', () => {
    expect(permissions.filter((p) => !roleAllows('admin', p))).toEqual(['approve']);
  });

  test('no role holds both approve and policies:manage', () => {
    expect(roles.filter((r) => roleAllows(r, 'approve') && roleAllows(r, 'policies:manage'))).toEqual([]);
  });

  test('only the approver approves', () => {
    expect(roles.filter((r) => roleAllows(r, 'approve'))).toEqual(['approver']);
  });

  test('an ingest key may only write telemetry', () => {
    expect(permissions.filter((p) => roleAllows('ingest', p))).toEqual(['telemetry:write']);
  });

  test('an analyst may read, and save the views the workspace shares', () => {
    expect(permissions.filter((p) => roleAllows('analyst', p))).toEqual(['read', 'views:manage']);
  });

  test('admin, operator and analyst save views; approver and ingest do not', () => {
    expect(roles.filter((r) => roleAllows(r, 'views:manage'))).toEqual(['admin', 'operator', 'analyst']);
  });

  test('an approver may read, approve and read the audit ledger but not run replays or manage policies', () => {
    expect(permissions.filter((p) => roleAllows('approver', p))).toEqual(['read', 'approve', 'audit:read']);
  });

  test('only admin and operator manage exporters', () => {
    expect(roles.filter((r) => roleAllows(r, 'exporters:manage'))).toEqual(['admin', 'operator']);
  });

  test('only admin declares the prefixes a workspace may act on', () => {
    expect(roles.filter((r) => roleAllows(r, 'prefixes:manage'))).toEqual(['admin']);
  });

  test('only admin and operator manage playbooks', () => {
    expect(roles.filter((r) => roleAllows(r, 'playbooks:manage'))).toEqual(['admin', 'operator']);
  });

  test('only admin manages keys', () => {
    expect(roles.filter((r) => roleAllows(r, 'keys:manage'))).toEqual(['admin']);
  });

  test('several roles allow what any one of them allows', () => {
    expect(rolesAllow(['analyst', 'approver'], 'approve')).toBe(true);
    expect(rolesAllow(['analyst', 'ingest'], 'approve')).toBe(false);
  });

  test('no role allows nothing', () => {
    expect(permissions.filter((p) => rolesAllow([], p))).toEqual([]);
  });

  test("several roles' permissions are the union of each role's, in the order of the permissions", () => {
    expect(permissionsOfRoles(['analyst', 'ingest'])).toEqual(['telemetry:write', 'read', 'views:manage']);
  });
});
