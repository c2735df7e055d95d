import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError, forbidden, notFound, unauthorized, validationError } from '../core/errors';
import { randomId } from '../core/ids';
import { defaultRole, type Role } from '../core/roles';
import { platformAdmin, type Principal } from '../core/principal';
import type { KeyOwner } from '../core/person';
import type { AuditEntry } from '../core/audit-chain';
import type { AuditEvent } from './audit-ledger';
import { ownerColumns, ownerOfKey, personOfKey, type KeyRecord } from '../storage/keys-repo';
import { counter, engineErrorsCounter, type Registry } from '../observability/metrics';
import { setNewest } from '../core/bounded-map';

export type { Principal } from '../core/principal';

/** Whom a key is minted for: a person (by subject; name and email describe them), or `service`. */
export type RequestedOwner = { subject: string; name?: string; email?: string } | 'service';

export interface MintRequest {
  orgId?: string;
  role?: Role;
  name?: string;
  expiresInSeconds?: number;
  owner?: RequestedOwner;
}

export interface MintedKey {
  key: string;
  record: KeyRecord;
}

const tokenPattern = /^ntk_([0-9a-f]{20})_([A-Za-z0-9_-]{43})$/;
const sha256 = (value: string) => createHash('sha256').update(value).digest();

/** Where keys are stored (KeysRepo); unit tests hand in a plain object. */
export interface KeyStore {
  put(record: KeyRecord): Promise<void>;
  get(keyId: string): Promise<KeyRecord | undefined>;
  list(opts: { orgId?: string; limit: number; after?: { created_at: number; key_id: string } }): Promise<KeyRecord[]>;
}

/** Where key changes are recorded (AuditLedger). */
export interface KeyAudit {
  append(event: AuditEvent): Promise<AuditEntry>;
}

/** How long a looked-up key stays in this process's cache; revocations made here apply at once. */
const cacheTtlMs = 5_000;
/** How long a cached key still serves while ClickHouse cannot be reached. */
const staleIfErrorMs = 15 * 60_000;
/**
 * How long, and how many, ids that no key has are remembered, so that a
 * client retrying a key that never existed (or a guesser repeating ids) costs
 * no storage lookup. Safe across processes: an id is 80 random bits drawn at
 * mint and its holder learns it only once it is stored, so no id looked up
 * before can turn into a key afterwards (but by guessing 80 random bits).
 * Short all the same: behind a load balancer on replicated tables, a key
 * minted through another process may reach this one's replica a moment
 * after its holder first uses it, and must not stay refused for long.
 */
const missTtlMs = 5_000;
const maxMisses = 50_000;

/**
 * Mints, authenticates and revokes keys. A key is `ntk_<id>_<secret>`: the id
 * finds the record, and the SHA-256 of the whole key is compared in constant
 * time with the stored hash. 256 random bits make a slow hash unnecessary.
 */
export class KeysService {
  private readonly adminHash?: Buffer;
  private readonly cache = new Map<string, { record: KeyRecord; fetchedAt: number }>();
  /** Ids without a key, with when each was looked up: the negative cache. */
  private readonly misses = new Map<string, number>();
  private readonly authFailures;
  private readonly storeLookups;
  private readonly engineErrors;

  constructor(
    private readonly deps: {
      repo: KeyStore;
      audit: KeyAudit;
      registry: Registry;
      adminApiKey?: string;
      now?: () => number;
      /** The 20 hex digits of a new key's id; random unless a test fixes them. */
      newKeyHex?: () => string;
      /** Tells the other API processes of a revocation (streams/key-revocations). */
      announceRevocation?: (keyId: string) => void;
      /** Whether the workspace takes keys of persons only from their own sign-in (SsoRequirements); unset: it does not. */
      personKeysFromSignIn?: (orgId: string) => Promise<boolean>;
    },
  ) {
    this.adminHash = deps.adminApiKey ? sha256(deps.adminApiKey) : undefined;
    this.authFailures = counter(deps.registry, { name: 'nettel_auth_failures_total', help: 'Rejected credentials by reason', labelNames: ['reason'] as const });
    this.engineErrors = engineErrorsCounter(deps.registry);
    this.storeLookups = counter(deps.registry, {
      name: 'nettel_key_store_lookups_total',
      help: 'Key records read from storage to authenticate, by result (found, missing, error); cached ones are not counted',
      labelNames: ['result'] as const,
    });
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  async authenticate(header: string | undefined): Promise<Principal> {
    const token = /^Bearer (\S+)$/i.exec(header?.trim() ?? '')?.[1];
    if (!token) return this.reject('missing');
    const hash = sha256(token);
    if (this.adminHash && timingSafeEqual(hash, this.adminHash)) return platformAdmin;
    const match = tokenPattern.exec(token);
    if (!match) return this.reject('malformed');
    const record = await this.lookup(`key_${match[1]}`);
    if (!record || !timingSafeEqual(hash, Buffer.from(record.key_hash, 'hex'))) return this.reject('invalid');
    if (record.revoked_at) return this.reject('revoked');
    if (record.expires_at && record.expires_at <= this.now()) return this.reject('expired');
    return { kind: 'workspace', keyId: record.key_id, orgId: record.org_id, roles: [record.role], person: personOfKey(record), via: 'api_key' };
  }

  /**
   * What a console session opened with `key` keeps of it: the SHA-256 of the
   * key's stored hash. Not a credential (nothing authenticates with it), yet
   * it ties the session to this very key: a platform admin key changed in
   * ADMIN_API_KEY ends the sessions opened with the old one.
   */
  keyCheckOf(key: string): string {
    return sha256(sha256(key).toString('hex')).toString('hex');
  }

  /**
   * The principal of a key the caller proved it held when its console
   * session opened: refused, like the key itself, once it is revoked,
   * expired or (the platform admin key) replaced.
   */
  async principalOfKey(keyId: string, keyCheck: string): Promise<Principal> {
    if (keyId === 'platform-admin') {
      const current = this.adminHash && sha256(this.adminHash.toString('hex')).toString('hex');
      if (current !== keyCheck) return this.reject('invalid');
      return platformAdmin;
    }
    const record = await this.lookup(keyId);
    if (!record || sha256(record.key_hash).toString('hex') !== keyCheck) return this.reject('invalid');
    if (record.revoked_at) return this.reject('revoked');
    if (record.expires_at && record.expires_at <= this.now()) return this.reject('expired');
    // Via the key: the session stands in for it, and a decision made through it is checked against the key again.
    return { kind: 'workspace', keyId: record.key_id, orgId: record.org_id, roles: [record.role], person: personOfKey(record), via: 'api_key' };
  }

  /**
   * Another process revoked a key: a cached copy is marked revoked, so it is
   * refused even while ClickHouse cannot be asked. (A forged notice costs at
   * most the cache's few seconds while ClickHouse answers: its record wins.)
   */
  revokedElsewhere(keyId: string): void {
    const cached = this.cache.get(keyId);
    if (cached && !cached.record.revoked_at) this.cache.set(keyId, { record: { ...cached.record, revoked_at: this.now() }, fetchedAt: this.now() });
  }

  private reject(reason: string): never {
    this.authFailures.inc({ reason });
    throw unauthorized();
  }

  private async lookup(keyId: string): Promise<KeyRecord | undefined> {
    const missedAt = this.misses.get(keyId);
    if (missedAt !== undefined && this.now() - missedAt < missTtlMs) return undefined;
    const cached = this.cache.get(keyId);
    if (cached && this.now() - cached.fetchedAt < cacheTtlMs) return cached.record;
    let record: KeyRecord | undefined;
    try {
      record = await this.deps.repo.get(keyId);
    } catch (err) {
      this.storeLookups.inc({ result: 'error' });
      this.engineErrors.inc({ engine: 'clickhouse', operation: 'key_lookup' });
      // ClickHouse unreachable: a key seen recently stays valid, so ingestion
      // (which needs only JetStream) goes on through a ClickHouse outage.
      if (cached && this.now() - cached.fetchedAt < staleIfErrorMs) return cached.record;
      throw err;
    }
    this.storeLookups.inc({ result: record ? 'found' : 'missing' });
    if (!record) {
      this.rememberMiss(keyId);
      return undefined;
    }
    // Only keys that exist are cached here: unknown ids, however many, cannot crowd them out.
    if (this.cache.size > 100_000) this.cache.clear();
    this.cache.set(keyId, { record, fetchedAt: this.now() });
    return record;
  }

  private rememberMiss(keyId: string): void {
    setNewest(this.misses, keyId, this.now(), maxMisses);
  }

  async mint(by: Principal, request: MintRequest): Promise<MintedKey> {
    const orgId = this.orgForMint(by, request.orgId);
    const owner = ownerForMint(by, request.owner, request.owner !== 'service' && (await this.deps.personKeysFromSignIn?.(orgId)) === true);
    const keyHex = this.deps.newKeyHex?.() ?? randomBytes(10).toString('hex');
    const key = `ntk_${keyHex}_${randomBytes(32).toString('base64url')}`;
    const createdAt = this.now();
    const record: KeyRecord = {
      key_id: `key_${keyHex}`,
      org_id: orgId,
      key_hash: sha256(key).toString('hex'),
      name: request.name ?? '',
      role: request.role ?? defaultRole,
      created_at: createdAt,
      expires_at: request.expiresInSeconds ? createdAt + request.expiresInSeconds * 1000 : 0,
      revoked_at: 0,
      created_by: by.keyId,
      version: 1,
      ...ownerColumns(owner),
    };
    await this.deps.repo.put(record);
    this.cache.delete(record.key_id);
    this.misses.delete(record.key_id);
    await this.deps.audit.append({
      orgId,
      actor: by.keyId,
      action: 'api_key.create',
      target: record.key_id,
      details: { role: record.role, name: record.name, expires_at: record.expires_at || null, owner: ownerOfKey(record) },
    });
    return { key, record };
  }

  private orgForMint(by: Principal, requested?: string): string {
    if (by.kind === 'platform_admin') return requested ?? randomId('org');
    if (requested && requested !== by.orgId) throw forbidden('a workspace key can only mint keys for its own workspace');
    return by.orgId;
  }

  async list(by: Principal, opts: { orgId?: string; limit: number; after?: { created_at: number; key_id: string } }) {
    const orgId = by.kind === 'platform_admin' ? opts.orgId : by.orgId;
    return this.deps.repo.list({ orgId, limit: opts.limit, after: opts.after });
  }

  async revoke(by: Principal, keyId: string): Promise<KeyRecord> {
    const record = await this.deps.repo.get(keyId);
    // Another workspace's key is reported missing, never forbidden.
    if (!record || (by.kind === 'workspace' && record.org_id !== by.orgId)) throw notFound('api key');
    if (record.revoked_at) throw new AppError('CONFLICT', 'api key is already revoked');
    const revoked: KeyRecord = { ...record, revoked_at: this.now(), version: record.version + 1 };
    await this.deps.repo.put(revoked);
    this.cache.set(keyId, { record: revoked, fetchedAt: this.now() });
    this.deps.announceRevocation?.(keyId);
    await this.deps.audit.append({ orgId: record.org_id, actor: by.keyId, action: 'api_key.revoke', target: keyId });
    return revoked;
  }
}

/**
 * Whom a new key belongs to. Persons must be real (docs/governance.md, "Who
 * is a person"): four eyes between persons would mean nothing if one could
 * mint a key in another's name, or invent a second person. So a person mints
 * keys for themselves (by default) or for `service`, never for another
 * person; a service key, which stands for nobody, mints `service` keys only;
 * and the platform admin alone names a person by hand, unless the workspace
 * takes keys of persons only from their own sign-in (`fromSignInOnly`), where
 * a key of a person is minted through that person's session or bearer token.
 */
export function ownerForMint(by: Principal, requested: RequestedOwner | undefined, fromSignInOnly = false): KeyOwner {
  if (requested === 'service') return 'service';
  if (!by.person) {
    if (!requested) return 'service';
    if (by.kind !== 'platform_admin') {
      throw forbidden(`${by.keyId} is a service key: it stands for nobody and mints service keys only (owner "service"); a key of a person is minted by that person, signed in or with a key of theirs, or by the platform admin`);
    }
    if (fromSignInOnly) throw forbidden(signInOnly);
    return { subject: requested.subject, name: requested.name ?? '', email: requested.email ?? '' };
  }
  if (fromSignInOnly && by.kind === 'workspace' && by.via === 'api_key') throw forbidden(signInOnly);
  if (!requested) return by.person;
  if (requested.subject !== by.person.subject) {
    throw validationError(`a person mints keys for themselves (${by.person.subject}) or for "service", never for another person (${requested.subject})`);
  }
  return { subject: by.person.subject, name: requested.name ?? by.person.name, email: requested.email ?? by.person.email };
}

const signInOnly =
  'this workspace takes keys of persons only from their own sign-in (person_keys_from_sign_in): the person mints their key signed in, through the console or with a bearer token; any credential may mint a service key (owner "service")';
