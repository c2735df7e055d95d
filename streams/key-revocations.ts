import type { Subscription } from 'nats';
import type { Logger } from '../observability/logger';
import type { NatsClient } from './nats-client';
import { names } from './names';

const keyIdPattern = /^key_[0-9a-f]{20}$/;

/**
 * Revocations told to every API process at once, over NATS: a process that
 * cached a key serves it from its cache while ClickHouse is unreachable, and
 * must not go on serving one another process revoked meanwhile. Core NATS
 * (not JetStream): a process that misses one while disconnected learns it
 * from ClickHouse at its next lookup. A message names a key id and nothing
 * else; anything else is ignored.
 */
export class KeyRevocations {
  private subscription?: Subscription;

  constructor(
    private readonly deps: { nats: NatsClient; prefix: string; log: Logger; onRevoked: (keyId: string) => void },
  ) {}

  private get subject(): string {
    return names(this.deps.prefix).keyRevokedSubject;
  }

  start(): Promise<void> {
    this.subscription = this.deps.nats.nc.subscribe(this.subject, {
      callback: (err, msg) => {
        if (err) return this.deps.log.warn({ err }, 'key revocation subscription failed');
        const keyId = msg.string();
        if (keyIdPattern.test(keyId)) this.deps.onRevoked(keyId);
      },
    });
    return Promise.resolve();
  }

  /** Tells the other processes; they learn it from ClickHouse too, so a lost message is not a lost revocation. */
  publish(keyId: string): void {
    this.deps.nats.nc.publish(this.subject, keyId);
  }

  stop(): Promise<void> {
    this.subscription?.unsubscribe();
    return Promise.resolve();
  }
}
