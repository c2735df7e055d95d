import { z } from 'zod';
import { refundToLevel, takeFromLevel, type BucketLevel } from '../core/token-bucket';
import { OpenedBucket } from './kv-bucket';
import type { NatsClient } from './nats-client';
import { names } from './names';

/** What a workspace may spend: cost units regained per second, and at most held. */
export interface SharedBudget {
  ratePerSecond: number;
  capacity: number;
}

/** A stored level is input from outside the process: one that does not parse counts as a full bucket. */
const levelSchema = z.object({ tokens: z.number().finite(), at: z.number().int().nonnegative() }).strict();

/** Compare-and-set rounds a take makes before it lets the request through: a storm of concurrent takes must not fail reads. */
const maxAttempts = 8;

/**
 * Each workspace's query budget as one token bucket in a JetStream key-value
 * bucket (`<PREFIX>_QUERY_BUDGET`), shared by every API process: a take reads
 * the level (a direct get) and writes the new one by compare-and-set on its
 * revision, so two processes spending at once cannot both spend the same
 * tokens. An entry lives as long as a bucket takes to fill again: once it
 * expires, the workspace's bucket is full, as it would be.
 */
export class QueryBudgetBucket {
  private readonly opened = new OpenedBucket('the query budget bucket');

  constructor(private readonly deps: { nats: NatsClient; prefix: string; replicas: number; budget: SharedBudget }) {}

  async start(): Promise<void> {
    const { nats, prefix, replicas, budget } = this.deps;
    // Whole seconds and at least a minute: JetStream keeps a bucket's age and de-duplication window in those terms.
    const refillMs = budget.ratePerSecond > 0 ? Math.ceil(budget.capacity / budget.ratePerSecond) * 1000 : 0;
    await this.opened.open(nats, names(prefix).queryBudgetBucket, { history: 1, ttl: Math.max(60_000, refillMs + 1000), replicas });
  }

  stop(): Promise<void> {
    this.opened.close();
    return Promise.resolve();
  }

  /** Takes `cost` units from the workspace's budget: 0 when taken, else the milliseconds until it could be. */
  async take(key: string, cost: number, now: () => number): Promise<number> {
    for (let attempt = 0; attempt < maxAttempts; attempt += 1) {
      const { level, revision } = await this.read(key);
      const taken = takeFromLevel(level, cost, now(), this.deps.budget);
      if (!taken.ok) return taken.retryAfterMs;
      if (await this.write(key, taken.level, revision)) return 0;
    }
    // Lost every round to other writers: the budget is being spent right now by others, and this read waits its turn.
    return 1000;
  }

  /** Gives back units a request took and did not use. */
  async refund(key: string, units: number, now: () => number): Promise<void> {
    for (let attempt = 0; attempt < maxAttempts; attempt += 1) {
      const { level, revision } = await this.read(key);
      if (!level) return;
      if (await this.write(key, refundToLevel(level, units, now(), this.deps.budget), revision)) return;
    }
  }

  private async read(key: string): Promise<{ level?: BucketLevel; revision?: number }> {
    const entry = await this.opened.read(key);
    if (!entry) return {};
    const parsed = levelSchema.safeParse(entry.value);
    return { level: parsed.success ? parsed.data : undefined, revision: entry.revision };
  }

  private async write(key: string, level: BucketLevel, revision: number | undefined): Promise<boolean> {
    const value = JSON.stringify(level);
    const written = revision === undefined ? await this.opened.create(key, value) : await this.opened.update(key, value, revision);
    return written !== undefined;
  }
}
