import { DiscardPolicy, StorageType } from 'nats';
import type { JetStreamWriteHealth } from './jetstream-write-health';
import type { NatsClient } from './nats-client';
import { putStream } from './put-stream';
import { apiErrorCode, jsErrors, names } from './names';

/**
 * Whether JetStream still stores what it is given. A nats-server can stay
 * up and answer while it stores nothing: after a write failed on a full disk,
 * the file store of that stream refuses every later write, even once space
 * returns, until the server restarts (seen with 2.15.2). Two signs, both
 * needed: one small message to a one-message stream of its own (a server
 * that stores nothing at all), and the telemetry publishes of this process
 * timing out (the telemetry stream alone refusing).
 *
 * `check` resolves `unknown` while this process is not connected: a client
 * that is still starting, or reconnecting, says nothing about the server.
 */
export class JetStreamWriteProbe {
  private ready = false;

  constructor(private readonly deps: { nats: NatsClient; prefix: string; timeoutMs: number; telemetry: JetStreamWriteHealth }) {}

  private get stream() {
    return names(this.deps.prefix).health;
  }

  async check(): Promise<'live' | 'unknown'> {
    if (!this.deps.nats.isConnected) return 'unknown';
    const failingSince = this.deps.telemetry.failingSince;
    if (failingSince !== undefined) throw new Error(`telemetry publishes time out since ${new Date(failingSince).toISOString()}`);
    try {
      if (!this.ready) await this.createStream();
      await this.deps.nats.js().publish(names(this.deps.prefix).healthSubject, new TextEncoder().encode(String(Date.now())), { timeout: this.deps.timeoutMs });
      return 'live';
    } catch (err) {
      // A stream deleted or lost with its store is created again at the next check.
      if (apiErrorCode(err) === jsErrors.streamNotFound || (err as { code?: string }).code === '503') this.ready = false;
      throw err;
    }
  }

  private async createStream(): Promise<void> {
    await putStream(this.deps.nats.jsm, {
      name: this.stream,
      subjects: [names(this.deps.prefix).healthSubject],
      storage: StorageType.File,
      max_msgs: 1,
      max_bytes: 64 * 1024,
      discard: DiscardPolicy.Old,
    });
    this.ready = true;
  }
}
