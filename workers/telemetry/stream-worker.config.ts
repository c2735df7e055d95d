import { z } from 'zod';
import { defineSettings, integer, setting } from '../../core/settings';
import { defaultTopology } from '../../streams/topology';
import { defaultStreamWorkerConfig } from './stream-worker';

/** The worker's and the topology's own defaults (the prefix is NATS_PREFIX's). */
const worker = defaultStreamWorkerConfig('');
const topology = defaultTopology('');

/** How a stream worker batches its writes to ClickHouse, and what it does with messages ClickHouse keeps refusing. */
export const streamWorkerSettings = defineSettings(
  'Stream workers',
  {
    WORKER_MAX_MESSAGES: setting(
      integer(1, 10_000).default(worker.maxMessages),
      'a stream worker writes when it holds this many messages; while a write runs, the next batch keeps growing until it ends (each insert has a fixed cost, so under load inserts grow instead of queueing)',
    ),
    WORKER_MAX_BATCH_BYTES: setting(integer(1024, 1024 ** 3).default(worker.maxBatchBytes), 'a stream worker writes when it holds this many bytes'),
    WORKER_MAX_WAIT_MS: setting(integer(1, 60_000).default(worker.maxWaitMs), 'a stream worker writes when the first message it holds has waited this long'),
    WORKER_MAX_DELIVERIES: setting(
      integer(1, 1_000).default(worker.maxDeliveries),
      'deliveries after which a message ClickHouse refuses (a refusal of its rows, or a code it does not know) goes to the dead-letter stream; a transient failure is retried without limit',
    ),
    NATS_DEAD_LETTER_MAX_BYTES: setting(
      z.coerce.number().int().positive().default(topology.deadLetterMaxBytes),
      'byte limit of the dead-letter stream; when it is full a new dead letter is refused and its message stays in the telemetry stream',
    ),
  },
  (e) => ({
    workers: { maxMessages: e.WORKER_MAX_MESSAGES, maxWaitMs: e.WORKER_MAX_WAIT_MS, maxBatchBytes: e.WORKER_MAX_BATCH_BYTES },
    /** Messages ClickHouse refuses: after how many deliveries they are dead-lettered, and the dead-letter stream's bound. */
    deadLetter: { afterDeliveries: e.WORKER_MAX_DELIVERIES, maxBytes: e.NATS_DEAD_LETTER_MAX_BYTES },
  }),
);
