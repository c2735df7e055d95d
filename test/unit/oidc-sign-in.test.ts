import { groupsOf } from '../../application/identity/oidc-sign-in';

/** The groups an ID token names, read defensively: the claim is the provider's, its shape varies by provider. */
test('a list of group names is read as it is', () => {
  expect(groupsOf({ groups: ['noc', 'edge'] }, 'groups')).toEqual(['noc', 'edge']);
});

test('one group given as a string is a list of one', () => {
  expect(groupsOf({ roles: 'noc' }, 'roles')).toEqual(['noc']);
});

test('a missing claim, or one that is neither a string nor a list, names no group', () => {
  expect([groupsOf({}, 'groups'), groupsOf({ groups: { noc: true } }, 'groups'), groupsOf({ groups: 7 }, 'groups')]).toEqual([[], [], []]);
});

test('entries that are not names (empty, not text, over 512 characters) are left out', () => {
  expect(groupsOf({ groups: ['noc', '', 3, null, 'x'.repeat(513), 'edge'] }, 'groups')).toEqual(['noc', 'edge']);
});

test('at most 1,000 groups are kept', () => {
  expect(groupsOf({ groups: Array.from({ length: 5000 }, (_, i) => `g${i}`) }, 'groups')).toHaveLength(1000);
});
