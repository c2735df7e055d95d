/**
 * The order in which statements reach an engine that runs one at a time.
 *
 * chDB runs one statement at a time per session (storage/chdb-clickhouse.ts
 * keeps a few sessions, each with its queue), and the calls waiting for
 * one are let in in no particular order: a one-row read (the correlator's
 * incidents, the automation starter's trigger) could wait behind several
 * bulk inserts of flows, each a few hundred milliseconds under load. Here
 * interactive statements (reads, small writes) go before the bulk inserts
 * waiting their turn; they never overtake the statement already running.
 * So that inserts are never starved by a stream of reads, a bulk insert
 * that has waited while `maxInteractiveAhead` interactive statements ran
 * goes next.
 */
export type StatementClass = 'interactive' | 'bulk';

export interface StatementQueueConfig {
  /** How many interactive statements may run in a row while a bulk insert waits. */
  maxInteractiveAhead: number;
}

export const defaultStatementQueueConfig: StatementQueueConfig = { maxInteractiveAhead: 16 };

/** Told of every statement once it settled: how long it waited for its turn, and how long it held the engine. */
export type StatementObserver = (kind: StatementClass, waitedMs: number, ranMs: number) => void;

export class StatementQueue {
  private running = false;
  private readonly waiting: Record<StatementClass, Array<() => void>> = { interactive: [], bulk: [] };
  private interactiveWhileBulkWaits = 0;

  constructor(
    private readonly config: StatementQueueConfig = defaultStatementQueueConfig,
    private readonly observe: StatementObserver = () => {},
  ) {}

  /** Statements running or waiting their turn. */
  get pending(): number {
    return (this.running ? 1 : 0) + this.waiting.interactive.length + this.waiting.bulk.length;
  }

  /** Runs `statement` when its turn comes; the next one starts once it settled. */
  async run<T>(kind: StatementClass, statement: () => Promise<T>): Promise<T> {
    const queuedAt = performance.now();
    if (this.running) await new Promise<void>((turn) => this.waiting[kind].push(turn));
    else this.running = true;
    const startedAt = performance.now();
    try {
      return await statement();
    } finally {
      this.observe(kind, startedAt - queuedAt, performance.now() - startedAt);
      this.next();
    }
  }

  private next(): void {
    const bulkDue = this.waiting.bulk.length > 0 && (this.waiting.interactive.length === 0 || this.interactiveWhileBulkWaits >= this.config.maxInteractiveAhead);
    const turn = bulkDue ? this.waiting.bulk.shift() : this.waiting.interactive.shift();
    if (!turn) {
      this.running = false;
      this.interactiveWhileBulkWaits = 0;
      return;
    }
    // Counts interactive statements let in ahead of a waiting bulk insert; a bulk insert's turn starts the count again.
    this.interactiveWhileBulkWaits = !bulkDue && this.waiting.bulk.length > 0 ? this.interactiveWhileBulkWaits + 1 : 0;
    turn();
  }
}
