/**
 * Whether this process's telemetry publishes are being stored: the
 * publishers report each outcome, the nats-server's liveness check reads it.
 * Only a publish that timed out counts as failing: a full backlog or a
 * refused message is answered at once, by a server that works.
 */
export class JetStreamWriteHealth {
  private timingOutSince?: number;

  constructor(private readonly now: () => number = Date.now) {}

  stored(): void {
    this.timingOutSince = undefined;
  }

  timedOut(): void {
    this.timingOutSince ??= this.now();
  }

  /** Forgets what it saw: the server was restarted, its next answers are news. */
  reset(): void {
    this.timingOutSince = undefined;
  }

  /** Since when every telemetry publish timed out; undefined while they are stored (or none was tried). */
  get failingSince(): number | undefined {
    return this.timingOutSince;
  }
}
