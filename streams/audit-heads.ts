import type { KV } from 'nats';
import type { AuditEntry } from '../core/audit-chain';
import { OpenedBucket } from './kv-bucket';
import type { NatsClient } from './nats-client';
import { names } from './names';

/**
 * The head of every org's audit chain, in a JetStream key-value bucket. A
 * new entry is claimed by compare-and-set on the head's revision, so two API
 * processes appending to one org at once cannot both take the same seq: the
 * loser reads the new head and chains after it. The head holds the whole
 * last batch claimed (its last entry, the earlier ones in its `batch` field),
 * so entries whose process died between the claim and the ClickHouse write
 * are written by the next appender. A head of one entry is that entry alone,
 * as before batches.
 */
export interface AuditHead {
  /** The last entry of the chain. */
  entry: AuditEntry;
  /** The batch the head closes, `entry` last. */
  entries: AuditEntry[];
  revision: number;
}

export class AuditHeads {
  private readonly opened = new OpenedBucket('the audit heads');

  constructor(
    private readonly nats: NatsClient,
    private readonly prefix: string,
    /** Copies JetStream keeps of the bucket (NATS_REPLICAS). */
    private readonly replicas: number,
  ) {}

  async start(): Promise<void> {
    await this.opened.open(this.nats, names(this.prefix).auditHeadsBucket, { history: 1, replicas: this.replicas });
  }

  stop(): Promise<void> {
    this.opened.close();
    return Promise.resolve();
  }

  private get bucket(): KV {
    return this.opened.bucket;
  }

  async read(orgId: string): Promise<AuditHead | undefined> {
    const found = await this.bucket.get(orgId);
    if (!found || found.operation !== 'PUT') return undefined;
    const { batch, ...entry } = found.json<AuditEntry & { batch?: AuditEntry[] }>();
    return { entry, entries: [...(Array.isArray(batch) ? batch : []), entry], revision: found.revision };
  }

  /** Moves the head to the last of `entries` if it is still at `revision` (undefined: the org has no head yet). */
  async claim(orgId: string, entries: readonly AuditEntry[], revision: number | undefined): Promise<boolean> {
    const last = entries.at(-1)!;
    const value = JSON.stringify(entries.length > 1 ? { ...last, batch: entries.slice(0, -1) } : last);
    // Lost to another writer (undefined): it moved the head first.
    const written = revision === undefined ? await this.opened.create(orgId, value) : await this.opened.update(orgId, value, revision);
    return written !== undefined;
  }
}
