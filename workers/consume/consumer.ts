/**
 * What the consume loop asks of a consumer, whichever messages it carries:
 * the telemetry lanes and the webhook outbox are both read through it.
 */

/** One opened pull of a durable consumer: its messages, until it fails or is stopped. */
export interface OpenedConsumer<M> {
  /** Ends when stop() was called; throws a ConsumeInterrupted when consuming failed. */
  readonly messages: AsyncIterable<M>;
  stop(): void;
}

/** Why consuming stopped or could not start: the reason is a metric label. */
export class ConsumeInterrupted extends Error {
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`consuming stopped: ${reason}`, options);
    this.name = 'ConsumeInterrupted';
  }
}
