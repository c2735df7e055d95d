import type { Logger } from '../../observability/logger';
import type { Counter } from 'prom-client';
import type { UnknownExporterCount } from '../../storage/exporters-repo';

const minuteMs = 60_000;

/** Where counts go once the prefixes are many too: one bucket, shown as such to the platform admin. */
export const overflowAddress = 'other';

/**
 * The network an address belongs to, as the unknown-exporter list shows it
 * once there are too many addresses: a /24 for IPv4, a /64 for IPv6 (a
 * sender that owns one /64 has 2^64 addresses to spread over).
 */
export function prefixOf(address: string): string {
  if (!address.includes(':')) return `${address.split('.').slice(0, 3).join('.')}.0/24`;
  const [head = '', tail] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

export interface UnknownExporterSink {
  recordUnknown(counts: UnknownExporterCount[]): Promise<void>;
}

/**
 * Datagrams and flows from addresses no workspace registered, added up per
 * address and minute in memory and written every `flushMs` (the table sums
 * rows of one address and minute, so partial writes add up). A failed write
 * keeps the counts for the next flush.
 *
 * The addresses are the sender's to choose: past `maxAddresses` entries a
 * new address is counted under its prefix (prefixOf), and past twice that
 * under one overflow bucket, so memory and rows stay bounded whatever
 * arrives. Each count moved so is counted in `aggregated`.
 */
export class UnknownExporterCounts {
  private counts = new Map<string, UnknownExporterCount>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly config: { flushMs: number; maxAddresses?: number },
    private readonly deps: { sink: UnknownExporterSink; log: Logger; aggregated?: Counter<'to'>; now?: () => number },
  ) {}

  private get maxAddresses(): number {
    return this.config.maxAddresses ?? 10_000;
  }

  add(address: string, datagrams: number, flows: number): void {
    const minute = Math.floor((this.deps.now ?? Date.now)() / minuteMs) * minuteMs;
    this.addCount({ address, minute, datagrams, flows });
  }

  private addCount(c: UnknownExporterCount): void {
    const bucket = this.bucketOf(c);
    const key = `${bucket}|${c.minute}`;
    const count = this.counts.get(key);
    if (count) {
      count.datagrams += c.datagrams;
      count.flows += c.flows;
    } else this.counts.set(key, { ...c, address: bucket });
  }

  /** The address itself while there is room, then its prefix, then the overflow bucket. */
  private bucketOf(c: UnknownExporterCount): string {
    if (this.counts.size < this.maxAddresses || this.counts.has(`${c.address}|${c.minute}`)) return c.address;
    const prefix = prefixOf(c.address);
    if (this.counts.size < 2 * this.maxAddresses || this.counts.has(`${prefix}|${c.minute}`)) {
      this.deps.aggregated?.inc({ to: 'prefix' });
      return prefix;
    }
    this.deps.aggregated?.inc({ to: 'overflow' });
    return overflowAddress;
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
