import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Person } from './person';
import type { CredentialKind } from './principal';

/**
 * Proof that a decision (on a replay, or on an automation run) comes from an
 * approver the API authenticated.
 * Key ids are not secrets (replays, the ledger and webhook events show them),
 * so a decision that only names one proves nothing. The API signs, with
 * DECISION_SIGNING_KEY, what it authenticated: the workspace, the run and
 * its workflow, the approver's credential id, the person behind it and how
 * the credential was proven (a key, a person's bearer token, a console
 * session), the decision and an expiry a few
 * minutes ahead. The worker recomputes the signature over the decision it
 * received and compares in constant time: the token is useless for any other
 * run, key or decision, and after its expiry. Only the token enters the
 * workflow's history; the key stays in the API and the worker.
 */
export interface DecisionClaims {
  orgId: string;
  /** The replay's or the automation run's id. */
  runId: string;
  workflowId: string;
  approverKeyId: string;
  /** The person behind the credential (null for a service key): the four-eyes rule compares persons, so the worker must be able to trust it. */
  approverPerson: Person | null;
  /** How the API authenticated the approver: for a key the worker checks the key again; for a person's token or session the signed person is the proof. */
  via: CredentialKind;
  /** The decision, or the change to an active automation run (withdraw, extend) the approver asked for. */
  decision: 'approve' | 'deny' | 'withdraw' | 'extend';
  /** What else the decision carries that the token must cover: an extension's minutes. */
  detail?: string;
}

export type TokenVerdict = { ok: true } | { ok: false; message: string };

/** How long a token proves its decision: the API sends it at once, so minutes are plenty, and a copy read from a history soon goes stale. */
export const decisionTokenTtlMs = 5 * 60_000;
/** DECISION_SIGNING_KEY's shortest length: 32 characters, as many as the HMAC-SHA256 key's 32 bytes. */
export const decisionSigningKeyMinLength = 32;

// dt2 signs the person and the credential's kind besides the key id; a dt1 token (minutes old at most) no longer verifies.
const version = 'dt2';
// An expiry is epoch milliseconds in decimal; the signature is 32 bytes in base64url (43 characters).
const tokenPattern = /^dt2\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/;

/** Signs and checks decision tokens under one signing key. */
export class DecisionTokens {
  private readonly key: Buffer;

  constructor(signingKey: string) {
    if (signingKey.length < decisionSigningKeyMinLength) {
      throw new Error(`DECISION_SIGNING_KEY must be at least ${decisionSigningKeyMinLength} characters`);
    }
    this.key = Buffer.from(signingKey, 'utf8');
  }

  /** A token for this decision, valid until `now + ttlMs`. */
  mint(claims: DecisionClaims, now: number, ttlMs = decisionTokenTtlMs): string {
    const expiresAt = now + ttlMs;
    return `${version}.${expiresAt}.${this.mac(claims, expiresAt).toString('base64url')}`;
  }

  /** Whether `token` was signed for exactly this decision and has not expired at `now`. */
  verify(token: string | undefined, claims: DecisionClaims, now: number): TokenVerdict {
    if (!token) return { ok: false, message: 'the decision carries no decision token: decisions are taken through the API, which signs one for the approver it authenticated' };
    const parts = tokenPattern.exec(token);
    if (!parts) return { ok: false, message: 'the decision token is malformed' };
    const expiresAt = Number(parts[1]);
    const given = Buffer.from(parts[2]!, 'base64url');
    const expected = this.mac(claims, expiresAt);
    // Both are 32 bytes (the pattern fixes the length), so the comparison takes the same time whatever they hold.
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return { ok: false, message: 'the decision token was not signed for this decision (another run, approver, person or decision, or not signed by the API)' };
    }
    if (expiresAt <= now) return { ok: false, message: `the decision token expired at ${new Date(expiresAt).toISOString()}` };
    return { ok: true };
  }

  /** The signature over every claim and the expiry; a JSON array keeps the fields apart whatever they contain. */
  private mac(claims: DecisionClaims, expiresAt: number): Buffer {
    const person = claims.approverPerson ? [claims.approverPerson.subject, claims.approverPerson.name, claims.approverPerson.email] : null;
    const signed = JSON.stringify([version, claims.orgId, claims.runId, claims.workflowId, claims.approverKeyId, person, claims.via, claims.decision, claims.detail ?? null, expiresAt]);
    return createHmac('sha256', this.key).update(signed).digest();
  }
}
