import { createHash, randomBytes } from 'node:crypto';
import {
  loginAttemptMs,
  loginAttemptSchema,
  needsTouch,
  sessionRecordSchema,
  sessionState,
  type LoginAttempt,
  type SessionLimits,
  type SessionRecord,
} from '../../core/session';
import { AppError } from '../../core/errors';
import { counter, type Registry } from '../../observability/metrics';
import { BucketFull } from '../../streams/kv-bucket';
import type { SessionStore } from '../../streams/session-bucket';

/** Who a new session is for: a person the provider vouched for, or an API key given once. */
export type SessionSubject =
  | { kind: 'person'; person: { subject: string; name: string; email: string }; groups: string[]; orgId: string | null }
  | { kind: 'key'; keyId: string; keyCheck: string; orgId: string | null };

export interface FoundSession {
  record: SessionRecord;
  revision: number;
}

/** The browser's secrets (a session id, a sign-in id): 256 random bits as base64url. */
const secretPattern = /^[A-Za-z0-9_-]{43}$/;
export const isSessionSecret = (value: string | undefined): value is string => value !== undefined && secretPattern.test(value);
const newSecret = () => randomBytes(32).toString('base64url');

/**
 * Entries are named by the SHA-256 of the browser's secret, never by the
 * secret: whoever reads the bucket (an operator, a NATS user) cannot replay
 * a session from what it holds.
 */
const hashOf = (secret: string) => createHash('sha256').update(secret).digest('hex');
const sessionKey = (id: string) => `s.${hashOf(id)}`;
const loginKey = (id: string) => `l.${hashOf(id)}`;

/** Compare-and-set rounds a change makes before it gives up to a storm of concurrent writes. */
const maxAttempts = 5;

/**
 * Opens, finds, changes and ends console sessions. A session ends at its
 * idle or absolute time-out (checked on every use, whatever the bucket's
 * own expiry does) or at logout; last use is written at most once per touch
 * interval, by compare-and-set, so a request racing a logout never brings
 * the session back.
 */
export class SessionService {
  private readonly opened;
  private readonly ended;
  private readonly signInsRefused;

  constructor(
    /** `store`: the sessions; `signIns`: the sign-ins under way, a bucket of their own, short-lived and bounded. */
    private readonly deps: { store: SessionStore; signIns: SessionStore; limits: SessionLimits; registry: Registry; now?: () => number },
  ) {
    this.opened = counter(deps.registry, { name: 'nettel_sessions_opened_total', help: 'Console sessions opened, by who signed in (person, key)', labelNames: ['kind'] as const });
    this.ended = counter(deps.registry, {
      name: 'nettel_sessions_ended_total',
      help: 'Console sessions ended, by reason (logout, idle, expired, unreadable)',
      labelNames: ['reason'] as const,
    });
    this.signInsRefused = counter(deps.registry, {
      name: 'nettel_sign_ins_refused_total',
      help: 'Sign-ins refused with 503 because the bucket of sign-ins under way was at its bound (SESSION_SIGN_INS_MAX_BYTES)',
    });
  }

  get limits(): SessionLimits {
    return this.deps.limits;
  }

  now(): number {
    return (this.deps.now ?? Date.now)();
  }

  /** A new session and the id the browser keeps for it (never stored as it is). */
  async open(subject: SessionSubject): Promise<{ id: string; record: SessionRecord }> {
    const now = this.now();
    const common = { v: 1 as const, csrf: newSecret(), created_at: now, last_seen_at: now, org_id: subject.orgId };
    const record: SessionRecord =
      subject.kind === 'person'
        ? { ...common, kind: 'person', person: subject.person, groups: subject.groups }
        : { ...common, kind: 'key', key_id: subject.keyId, key_check: subject.keyCheck };
    const id = newSecret();
    if (!(await this.deps.store.create(sessionKey(id), record))) throw new Error('a new session id was already taken');
    this.opened.inc({ kind: subject.kind });
    return { id, record };
  }

  /** The live session of `id`, its last use recorded when due; undefined once it ended (and then removed). */
  async find(id: string): Promise<FoundSession | undefined> {
    const key = sessionKey(id);
    const entry = await this.deps.store.read(key);
    if (!entry) return undefined;
    const parsed = sessionRecordSchema.safeParse(entry.value);
    const now = this.now();
    const state = parsed.success ? sessionState(parsed.data, now, this.deps.limits) : 'unreadable';
    if (!parsed.success || state !== 'live') {
      await this.deps.store.remove(key);
      this.ended.inc({ reason: state });
      return undefined;
    }
    if (!needsTouch(parsed.data, now, this.deps.limits)) return { record: parsed.data, revision: entry.revision };
    const touched = { ...parsed.data, last_seen_at: now };
    // Lost to another write (a logout, a workspace choice, another process's touch): that write stands.
    const revision = await this.deps.store.update(key, touched, entry.revision);
    return revision === undefined ? this.reread(key) : { record: touched, revision };
  }

  private async reread(key: string): Promise<FoundSession | undefined> {
    const entry = await this.deps.store.read(key);
    const parsed = entry && sessionRecordSchema.safeParse(entry.value);
    if (!entry || !parsed?.success || sessionState(parsed.data, this.now(), this.deps.limits) !== 'live') return undefined;
    return { record: parsed.data, revision: entry.revision };
  }

  /** Sets the workspace the session acts in; undefined when the session ended meanwhile. */
  async choose(id: string, orgId: string): Promise<SessionRecord | undefined> {
    const key = sessionKey(id);
    for (let attempt = 0; attempt < maxAttempts; attempt += 1) {
      const found = await this.find(id);
      if (!found) return undefined;
      const next = { ...found.record, org_id: orgId };
      if ((await this.deps.store.update(key, next, found.revision)) !== undefined) return next;
    }
    throw new Error('the session kept changing while its workspace was set');
  }

  /** Ends a session (logout); the record it held, for the provider's logout. */
  async close(id: string): Promise<SessionRecord | undefined> {
    const found = await this.find(id);
    await this.deps.store.remove(sessionKey(id));
    if (found) this.ended.inc({ reason: 'logout' });
    return found?.record;
  }

  /**
   * Keeps a sign-in under way; the id is the browser's, in a cookie that binds
   * the callback to it. Throws when the sign-ins' bucket is full (its bound in
   * bytes, SESSION_SIGN_INS_MAX_BYTES): the caller answers 503.
   */
  async saveLogin(attempt: Omit<LoginAttempt, 'created_at'>): Promise<string> {
    const id = newSecret();
    let created: boolean;
    try {
      created = await this.deps.signIns.create(loginKey(id), { ...attempt, created_at: this.now() });
    } catch (err) {
      if (!(err instanceof BucketFull)) throw err;
      this.signInsRefused.inc();
      // Entries leave the bucket within the 10 minutes a sign-in may take.
      throw new AppError('UNAVAILABLE', 'too many sign-ins are under way; retry in a minute', { cause: err, retryAfterSeconds: 60 });
    }
    if (!created) throw new Error('a new sign-in id was already taken');
    return id;
  }

  /**
   * The sign-in under way for `id`, once: it is deleted on the condition that
   * it is still the entry read, so of two callbacks racing with one cookie
   * only the one whose deletion lands first gets it.
   */
  async takeLogin(id: string): Promise<LoginAttempt | undefined> {
    const key = loginKey(id);
    const entry = await this.deps.signIns.read(key);
    if (!entry) return undefined;
    if (!(await this.deps.signIns.removeAt(key, entry.revision))) return undefined;
    const parsed = loginAttemptSchema.safeParse(entry.value);
    if (!parsed.success || this.now() - parsed.data.created_at > loginAttemptMs) return undefined;
    return parsed.data;
  }
}
