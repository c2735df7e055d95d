import { z } from 'zod';
import { personSchema } from './person-schema';

/**
 * A console session as the service keeps it server side: who signed in (a
 * person through the OpenID provider, or an API key given once), the
 * workspace they chose, the CSRF token the console echoes, and the two
 * instants its time-outs count from. The browser holds only an opaque id.
 */
export interface SessionLimits {
  /** A session unused this long ends (SESSION_IDLE_MINUTES). */
  idleMs: number;
  /** A session ends this long after sign-in, used or not (SESSION_MAX_HOURS). */
  maxMs: number;
}

const commonFields = {
  v: z.literal(1),
  csrf: z.string().min(32).max(128),
  created_at: z.number().int().nonnegative(),
  last_seen_at: z.number().int().nonnegative(),
  /** The workspace (org id) requests act in; null until a person holding several picks one. */
  org_id: z.string().min(1).max(64).nullable(),
};

/** Values read back from the bucket are input from outside the process: each is parsed, never trusted as it is. */
export const sessionRecordSchema = z.discriminatedUnion('kind', [
  z
    .object({
      ...commonFields,
      kind: z.literal('person'),
      person: personSchema.strict(),
      /** The groups the provider named at sign-in; mapped to workspaces and roles again on every request. */
      groups: z.array(z.string().max(512)).max(1000),
    })
    // An entry written before the provider's ID token was dropped from sessions still reads: the token is ignored, never kept.
    .strip(),
  z
    .object({
      ...commonFields,
      kind: z.literal('key'),
      key_id: z.string().min(1).max(64),
      /** Ties the session to the very key it was opened with (KeysService.keyCheckOf); not a credential. */
      key_check: z.string().regex(/^[0-9a-f]{64}$/),
    })
    .strict(),
]);

export type SessionRecord = z.infer<typeof sessionRecordSchema>;
export type PersonSessionRecord = Extract<SessionRecord, { kind: 'person' }>;

/** A sign-in under way: what the callback checks the provider's answer against. */
export const loginAttemptSchema = z
  .object({
    state: z.string().min(16).max(128),
    nonce: z.string().min(16).max(128),
    code_verifier: z.string().min(43).max(128),
    created_at: z.number().int().nonnegative(),
  })
  .strict();

export type LoginAttempt = z.infer<typeof loginAttemptSchema>;

/** How long a person may take on the provider's pages before the sign-in must start again. */
export const loginAttemptMs = 10 * 60_000;

export type SessionState = 'live' | 'idle' | 'expired';

/** Whether a session may still be used at `now`: ended by its absolute time-out first, then by its idle one. */
export function sessionState(record: Pick<SessionRecord, 'created_at' | 'last_seen_at'>, now: number, limits: SessionLimits): SessionState {
  if (now >= record.created_at + limits.maxMs) return 'expired';
  if (now >= record.last_seen_at + limits.idleMs) return 'idle';
  return 'live';
}

/**
 * How stale the recorded last use may grow before it is written again: a
 * tenth of the idle time-out, at most a minute. Requests in between write
 * nothing, so a busy console costs a read per request, not a write; a
 * session may end up to this much before its idle time-out.
 */
export const touchIntervalMs = (limits: SessionLimits) => Math.min(60_000, Math.floor(limits.idleMs / 10));

export const needsTouch = (record: Pick<SessionRecord, 'last_seen_at'>, now: number, limits: SessionLimits) =>
  now - record.last_seen_at >= touchIntervalMs(limits);

/** When the session ends if it is not used again: the earlier of its idle and its absolute time-out. */
export const sessionEndsAt = (record: Pick<SessionRecord, 'created_at' | 'last_seen_at'>, limits: SessionLimits) =>
  Math.min(record.last_seen_at + limits.idleMs, record.created_at + limits.maxMs);
