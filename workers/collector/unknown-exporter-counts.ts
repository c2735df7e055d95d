import type { Logger } from '../../observability/logger';
import type { UnknownExporterCount } from '../../storage/exporters-repo';

const minuteMs = 60_000;

export interface UnknownExporterSink {
  recordUnknown(counts: UnknownExporterCount[]): Promise<void>;
}

/**
 * Datagrams and flows from addresses no workspace registered, added up per
 * address and minute in memory and written every `flushMs` (the table sums
 * rows of one address and minute, so partial writes add up). A failed write
 * keeps the counts for the next flush.
 */
export class UnknownExporterCounts {
  private counts = new Map<string, UnknownExporterCount>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly config: { flushMs: number },
    private readonly deps: { sink: UnknownExporterSink; log: Logger; now?: () => number },
  ) {}

  add(address: string, datagrams: number, flows: number): void {
    const minute = Math.floor((this.deps.now ?? Date.now)() / minuteMs) * minuteMs;
    this.addCount({ address, minute, datagrams, flows });
  }

  private addCount(c: UnknownExporterCount): void {
    const key = `${c.address}|${c.minute}`;
    const count = this.counts.get(key);
    if (count) {
      count.datagrams += c.datagrams;
      count.flows += c.flows;
    } else this.counts.set(key, { ...c });
  }

  start(): Promise<void> {
    this.timer = setInterval(() => void this.flush(), this.config.flushMs);
    return Promise.resolve();
  }

  async flush(): Promise<void> {
    if (this.counts.size === 0) return;
    const batch = this.counts;
    this.counts = new Map();
    try {
      await this.deps.sink.recordUnknown([...batch.values()]);
    } catch (err) {
      this.deps.log.warn({ err }, 'unknown exporter counts could not be written; keeping them for the next flush');
      for (const c of batch.values()) this.addCount(c);
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
