import type { JsMsg } from 'nats';
import type { Logger } from '../../observability/logger';

/**
 * Hands a consumer's messages to `handle`, at most `concurrency` at once, for
 * the consume loop (consume-loop.ts): `add` waits for a free slot,
 * `flush` for every message in hand. `handle` acknowledges or NAKs each
 * message itself; one that throws has its message offered again after a
 * second.
 */
export class ConcurrentHandler {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly config: { consumer: string; concurrency: number },
    private readonly deps: { handle: (m: JsMsg) => Promise<void>; log: Logger },
  ) {}

  async add(m: JsMsg): Promise<void> {
    while (this.inFlight.size >= this.config.concurrency) await Promise.race(this.inFlight);
    const work: Promise<void> = this.deps
      .handle(m)
      .catch((err: unknown) => {
        this.deps.log.error({ err, consumer: this.config.consumer, seq: m.seq }, 'unable to handle a message; it is offered again');
        m.nak(1_000);
      })
      .finally(() => this.inFlight.delete(work));
    this.inFlight.add(work);
  }

  async flush(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }
}
