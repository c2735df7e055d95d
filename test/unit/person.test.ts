import { isPerson, personBounds, personOfClaims, samePerson } from '../../core/person';
import { personSchema } from '../../core/person-schema';
import { sessionRecordSchema } from '../../core/session';

/** One shape of a person (issue 32, item 11): whatever signs in is a person everywhere it is stored, checked and audited. */
describe('a person', () => {
  const longEmail = `${'a'.repeat(300)}@example.test`;

  test('an e-mail of 300 characters that signs in keeps its person for the audit ledger, the decision and the session', () => {
    const person = personOfClaims({ sub: 'u-1', name: 'Long Mail', email: longEmail });
    expect(person?.email).toBe(longEmail);
    expect(isPerson(person)).toBe(true);
    expect(personSchema.safeParse(person).success).toBe(true);
    const session = { v: 1, csrf: 'c'.repeat(32), created_at: 1, last_seen_at: 1, org_id: null, kind: 'person', person, groups: [], id_token: null };
    expect(sessionRecordSchema.safeParse(session).success).toBe(true);
  });

  test('claims are cut to the same bounds the checks hold, and a subject longer than a subject may be names nobody', () => {
    const person = personOfClaims({ sub: 'u-2', name: 'n'.repeat(400), email: 'e'.repeat(400) })!;
    expect([person.name.length, person.email.length]).toEqual([personBounds.name, personBounds.email]);
    expect(isPerson(person)).toBe(true);
    expect(personOfClaims({ sub: 's'.repeat(personBounds.subject + 1) })).toBeNull();
    expect(personOfClaims({ sub: '' })).toBeNull();
    expect(personOfClaims({ name: 'no subject' })).toBeNull();
  });

  test('the check without zod and the zod schema agree at every bound', () => {
    for (const field of ['subject', 'name', 'email'] as const) {
      for (const length of [personBounds[field], personBounds[field] + 1]) {
        const candidate = { subject: 's', name: '', email: '', [field]: 'x'.repeat(length) };
        expect([field, length, isPerson(candidate)]).toEqual([field, length, personSchema.safeParse(candidate).success]);
      }
    }
  });

  test('one person is one subject, whatever name or e-mail describes them', () => {
    expect(samePerson({ subject: 'u-1', name: 'Alice', email: '' }, { subject: 'u-1', name: 'A. Martin', email: 'a@x' })).toBe(true);
    expect(samePerson({ subject: 'alice', name: 'Alice', email: '' }, { subject: 'u-1', name: 'Alice', email: '' })).toBe(false);
  });
});
