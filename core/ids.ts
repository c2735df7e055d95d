import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';

/** Random identifiers: a prefix and 20 hex characters (80 bits), e.g. `evt_3f9a…`. */
export function randomId(prefix: string, bytes = 10): string {
  return `${prefix}_${randomBytes(bytes).toString('hex')}`;
}

/** Identifiers derived from their inputs, so that the same inputs always give the same id. */
export function derivedId(prefix: string, ...parts: Array<string | number>): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(String(part)).update('\u0000');
  return `${prefix}_${hash.digest('hex').slice(0, 20)}`;
}

/** The prefixes of the ids the service issues; every such id is the prefix, `_` and 20 hex digits. */
export type IdPrefix = 'inc' | 'pol' | 'rep' | 'key' | 'evt' | 'org' | 'exp' | 'whk' | 'pfx' | 'aut' | 'grc' | 'vw';

/** Whether a string has the form of an id this service issued with that prefix. */
export const hasIdForm = (prefix: IdPrefix, value: string) => value.length === prefix.length + 21 && new RegExp(`^${prefix}_[0-9a-f]{20}$`).test(value);

/** An org id: the generated `org_…` or one the platform admin chose. */
export const orgIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'org_id is 1-64 letters, digits, _ or -');

/**
 * The ledger of the platform's own events, which name no workspace for sure
 * (a refused sign-in: its token's claims are not to be trusted). The platform
 * admin reads it as `GET /v1/audit?org_id=_platform`; no workspace may take the id.
 */
export const platformLedgerOrgId = '_platform';

/** An org id a workspace may have: any but the platform ledger's. */
export const workspaceOrgIdSchema = orgIdSchema.refine((id) => id !== platformLedgerOrgId, `${platformLedgerOrgId} is the platform's ledger, not a workspace`);

/**
 * Event ids of accepted records: `evt_`, the 16 hex digits of the request (or
 * collected batch) and the record's index in 6 hex digits. The rows of one
 * request share their first `requestPrefixLength` characters, which lets the
 * stream workers ask ClickHouse about a whole request at once.
 */
export const recordEventId = (requestHex: string, index: number): string => `evt_${requestHex}${index.toString(16).padStart(6, '0')}`;

/** The length of a record event id's request prefix (`evt_` and the request's 16 hex digits). */
export const requestPrefixLength = 20;
/** The length of a record event id. */
export const recordEventIdLength = 26;

const recordEventIdForm = /^evt_[0-9a-f]{22}$/;

/** The request prefix of a record event id, or undefined for an id of another form. */
export function requestPrefixOf(eventId: string): string | undefined {
  return eventId.length === recordEventIdLength && recordEventIdForm.test(eventId) ? eventId.slice(0, requestPrefixLength) : undefined;
}

/**
 * The id of one insert of flows (see storage/rollup-repair.ts): its start in
 * epoch ms above 20 random bits, as decimal text of a UInt64. Ids grow with
 * time, so the parts a write lands in keep them in a narrow range.
 */
export function newWriteId(nowMs: number = Date.now()): string {
  const random = BigInt(randomBytes(4).readUInt32BE(0) & 0xfffff);
  return ((BigInt(Math.trunc(nowMs)) << 20n) | random).toString();
}
