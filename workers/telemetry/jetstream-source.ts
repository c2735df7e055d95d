import type { Logger } from '../../observability/logger';
import type { NatsClient } from '../../streams/nats-client';
import { ensureWritersConsumer, laneConsumer, type Lane, type TopologyConfig } from '../../streams/topology';
import { JetStreamPull } from '../consume/jetstream-pull';
import type { OpenedConsumer } from '../consume/consumer';
import type { MessageSource, WorkMessage } from './stream-worker-ports';
import { names } from '../../streams/names';

export interface JetStreamSourceConfig {
  /** The writers' consumer as the topology defines it: recreated from this when it was deleted. */
  topology: Pick<TopologyConfig, 'prefix' | 'ackWaitMs' | 'maxAckPending'>;
  /** Most messages one pull asks for. */
  maxMessages: number;
  /** The lane's consumer this source pulls from (streams/topology.ts): bulk telemetry unless told. */
  lane?: Lane;
}

/**
 * A lane's shared durable consumer of the telemetry stream as a message
 * source (pulls as workers/consume/jetstream-pull.ts opens them).
 *
 * Every open makes sure the consumer exists (recreating it
 * from the topology) and records the stream's last sequence. A recreated
 * consumer, or a server restarted without its delivery state, hands out again
 * messages some worker already wrote without marking them redelivered: every
 * message up to that sequence is checked for stored rows before it is written.
 * So is a message held while this process lost NATS or stalled past half the
 * ack wait (its keep-alives may not have reached the server in time).
 */
export class JetStreamSource implements MessageSource {
  private checkUpToSeq = 0;
  private readonly pull: JetStreamPull;

  constructor(
    private readonly config: JetStreamSourceConfig,
    private readonly deps: { nats: NatsClient; log: Logger },
  ) {
    const consumer = laneConsumer(config.topology.prefix, config.lane ?? 'bulk').name;
    this.pull = new JetStreamPull(
      { stream: names(config.topology.prefix).stream, consumer, maxMessages: config.maxMessages, ackWaitMs: config.topology.ackWaitMs },
      { nats: deps.nats, prepare: () => this.prepareOpen(consumer) },
    );
  }

  mayHaveBeenDelivered(message: WorkMessage): boolean {
    return message.info.streamSequence <= this.checkUpToSeq || this.pull.mayHaveLapsed(message);
  }

  open(): Promise<OpenedConsumer<WorkMessage>> {
    return this.pull.open();
  }

  private async prepareOpen(consumer: string): Promise<void> {
    const { jsm } = this.deps.nats;
    const n = names(this.config.topology.prefix);
    if (await ensureWritersConsumer(jsm, this.config.topology, this.config.lane)) {
      this.deps.log.warn({ stream: n.stream, consumer }, 'recreated a writers consumer');
    }
    const stream = await jsm.streams.info(n.stream);
    this.checkUpToSeq = Math.max(this.checkUpToSeq, stream.state.last_seq);
  }
}
