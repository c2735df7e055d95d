import type { Logger } from '../../observability/logger';
import { counter, gauge, type Registry } from '../../observability/metrics';

/** A short lease as streams/lease.ts keeps it in JetStream: taken or renewed by hold(), let go by release(). */
export interface LeaseHold {
  hold(): Promise<boolean>;
  release(): Promise<void>;
  holder(): Promise<string | undefined>;
  /** When to try again to take a lease another process stopped renewing, sooner than the next pass (streams/lease.ts). */
  retryAt?(): number | undefined;
}

/** This process does not hold the speaker's lease (any more): the pass stops before its next change to the speaker. */
export class LeaseLostError extends Error {
  constructor(message = 'another process holds the lease on the BGP speaker') {
    super(message);
    this.name = 'LeaseLostError';
  }
}

/**
 * The key of a speaker's lease: its API's address, JetStream's key characters
 * only. A loopback address names the host's own speaker (the embedded
 * gobgpd of each machine), so the host's name goes before it: two machines
 * with a speaker each keep a lease each.
 */
export function speakerLeaseKey(address: string, hostname: string): string {
  const loopback = /^(127\.|localhost\b|\[::1\])/.test(address);
  return `speaker.${(loopback ? `${hostname}.${address}` : address).replace(/[^-/_=a-zA-Z0-9]/g, '_')}`;
}

const leaseMetrics = (registry: Registry) => ({
  changes: counter(registry, {
    name: 'nettel_mitigation_lease_changes_total',
    help: 'The lease on the BGP speaker, as this process saw it change: taken (this process became the one reconciler), lost (another took it, or it could not be renewed: no change to the speaker after), released (at stop)',
    labelNames: ['change'] as const,
  }),
  failures: counter(registry, {
    name: 'nettel_mitigation_lease_failures_total',
    help: 'Takes, renewals and releases of the lease on the BGP speaker that failed (NATS did not answer); a holder that cannot renew stops changing the speaker',
    labelNames: ['operation'] as const,
  }),
  held: gauge(registry, { name: 'nettel_mitigation_lease_held', help: '1 while this process holds the lease on the BGP speaker (it alone changes the speaker), else 0' }),
});

/**
 * The mitigation reconciler's side of the lease: whether this process is the
 * one that changes the speaker, each change of holder counted and logged.
 */
export class ReconcilerLease {
  private held = false;
  private failing = false;
  private readonly metrics;

  constructor(
    private readonly lease: LeaseHold,
    private readonly deps: { registry: Registry; log: Logger },
  ) {
    this.metrics = leaseMetrics(deps.registry);
    this.metrics.held.set(0);
  }

  /** Takes or renews the lease: whether this process may change the speaker now. Throws when NATS does not answer (then it may not). */
  async hold(): Promise<boolean> {
    let now: boolean;
    try {
      now = await this.lease.hold();
    } catch (err) {
      this.metrics.failures.inc({ operation: this.held ? 'renew' : 'take' });
      this.became(false);
      if (!this.failing) this.deps.log.warn({ err }, 'unable to take or renew the lease on the BGP speaker; no change to the speaker until it is renewed');
      this.failing = true;
      throw err;
    }
    this.failing = false;
    this.became(now);
    return now;
  }

  /** Right before each change to the speaker: renews the lease, or throws LeaseLostError and nothing is changed. */
  async fence(): Promise<void> {
    if (!(await this.hold())) throw new LeaseLostError();
  }

  /** At stop, after the last pass: the other processes need not wait for the lease to expire. */
  async release(): Promise<void> {
    if (!this.held) return;
    this.became(false, 'released');
    try {
      await this.lease.release();
    } catch (err) {
      this.metrics.failures.inc({ operation: 'release' });
      this.deps.log.warn({ err }, 'unable to release the lease on the BGP speaker; another process takes it once it expires');
    }
  }

  /** Who holds the lease, for the probe of a process that does not. */
  holder(): Promise<string | undefined> {
    return this.lease.holder();
  }

  /** When a process standing by should try again, sooner than its next pass: its holder stopped renewing. */
  retryAt(): number | undefined {
    return this.lease.retryAt?.();
  }

  get isHeld(): boolean {
    return this.held;
  }

  private became(held: boolean, change: 'lost' | 'released' = 'lost'): void {
    if (held === this.held) return;
    this.held = held;
    this.metrics.held.set(held ? 1 : 0);
    this.metrics.changes.inc({ change: held ? 'taken' : change });
    if (held) this.deps.log.info('took the lease on the BGP speaker: this process reconciles it');
    else if (change === 'released') this.deps.log.info('released the lease on the BGP speaker');
    else this.deps.log.warn('lost the lease on the BGP speaker: no change to the speaker until it is taken again');
  }
}
