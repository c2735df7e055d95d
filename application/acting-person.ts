import { AsyncLocalStorage } from 'node:async_hooks';
import type { Person } from '../core/person';
import type { Principal } from '../core/principal';

/**
 * The person behind the request being served, for the audit ledger: every
 * entry names its actor's person beside the credential, and the many services
 * that append entries know only the credential id (`actor`). The API's
 * authentication runs each request inside `actingAs`, and the ledger asks
 * `personActing` for the entry's actor. Only an entry whose actor is the
 * request's own credential gets the person: anything else appended meanwhile
 * (a worker's, the system's) is not mistaken for the caller's.
 */
const acting = new AsyncLocalStorage<{ keyId: string; person: Person | null }>();

export function actingAs<T>(principal: Principal, work: () => T): T {
  return acting.run({ keyId: principal.keyId, person: principal.person }, work);
}

/** The person of `actor` when it is the credential of the request being served; undefined when unknown here. */
export function personActing(actor: string): Person | null | undefined {
  const current = acting.getStore();
  return current && current.keyId === actor ? current.person : undefined;
}

/** Runs `work` as the credential `keyId` of `person`: a change held for a second person is applied, once approved, as its requester's. */
export function actingFor<T>(keyId: string, person: Person | null, work: () => T): T {
  return acting.run({ keyId, person }, work);
}
