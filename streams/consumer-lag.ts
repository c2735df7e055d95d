import type { JetStreamManager } from 'nats';
import { engineErrorsCounter, gauge, type Registry } from '../observability/metrics';
import { laneConsumer, lanes } from './topology';
import { names } from './names';

/**
 * The writers' backlog, read from JetStream when metrics are scraped (never
 * on a timer): per lane's consumer, messages not yet handed to a worker and
 * messages handed out and not acknowledged; and the age of the oldest record not known to be written.
 *
 * That age is the publish time of the stream's first message. The stream has
 * work-queue retention and a worker acknowledges only after ClickHouse took
 * the rows, so its first message is the oldest accepted record that no worker
 * has confirmed as written, whether it waits in the stream, in a worker's
 * batch or in a retry delay, whichever worker process holds it. It is an upper
 * bound: a message written but whose ack is still on its way counts for a
 * few milliseconds more. Dead-lettered messages leave the stream and do not
 * count. An empty stream reads 0.
 */
export interface ConsumerLagOptions {
  prefix: string;
  jsm: () => JetStreamManager;
  /** A scrape waits at most this long for JetStream; a slower answer counts as an engine error. */
  timeoutMs?: number;
  now?: () => number;
}

interface LagSample {
  /** By consumer name. */
  pending: Map<string, number>;
  ackPending: Map<string, number>;
  oldestAgeSeconds: number;
}

/** The three gauges of one scrape share one pair of info requests. */
const sampleReuseMs = 250;

/** One reading of the stream and of every lane's consumer; undefined (and counted) when JetStream does not answer in time. */
async function takeSample(opts: ConsumerLagOptions, now: () => number, engineErrors: ReturnType<typeof engineErrorsCounter>): Promise<LagSample | undefined> {
  const n = names(opts.prefix);
  try {
    const jsm = opts.jsm();
    const consumerNames = lanes.map((lane) => laneConsumer(opts.prefix, lane).name);
    const [stream, ...consumers] = await withTimeout(
      Promise.all([jsm.streams.info(n.stream), ...consumerNames.map((name) => jsm.consumers.info(n.stream, name))]),
      opts.timeoutMs ?? 1_000,
    );
    const firstTs = stream.state.messages > 0 ? Date.parse(stream.state.first_ts) : NaN;
    const oldestAgeSeconds = Number.isFinite(firstTs) ? Math.max(0, (now() - firstTs) / 1000) : 0;
    return {
      pending: new Map(consumers.map((c) => [c.name, c.num_pending])),
      ackPending: new Map(consumers.map((c) => [c.name, c.num_ack_pending])),
      oldestAgeSeconds,
    };
  } catch {
    engineErrors.inc({ engine: 'nats', operation: 'consumer_info' });
    return undefined;
  }
}

export function consumerLagMetrics(registry: Registry, opts: ConsumerLagOptions) {
  const n = names(opts.prefix);
  const now = opts.now ?? Date.now;
  const engineErrors = engineErrorsCounter(registry);
  let last: { at: number; sample: Promise<LagSample | undefined> } | undefined;
  const take = () => takeSample(opts, now, engineErrors);
  const sample = (): Promise<LagSample | undefined> => {
    if (!last || now() - last.at > sampleReuseMs) last = { at: now(), sample: take() };
    return last.sample;
  };

  return {
    pending: gauge(registry, {
      name: 'nettel_stream_consumer_pending_messages',
      help: 'Messages of the stream not yet handed to a worker, by consumer (read on scrape)',
      labelNames: ['consumer'] as const,
      async collect() {
        const s = await sample();
        this.reset();
        for (const [consumer, value] of s?.pending ?? []) this.set({ consumer }, value);
      },
    }),
    ackPending: gauge(registry, {
      name: 'nettel_stream_consumer_ack_pending_messages',
      help: 'Messages handed to a worker and not yet acknowledged, by consumer (read on scrape)',
      labelNames: ['consumer'] as const,
      async collect() {
        const s = await sample();
        this.reset();
        for (const [consumer, value] of s?.ackPending ?? []) this.set({ consumer }, value);
      },
    }),
    oldestUnwrittenAge: gauge(registry, {
      name: 'nettel_stream_oldest_unwritten_age_seconds',
      help: 'Age of the oldest accepted record no worker has confirmed as written: the publish time of the stream\'s first message',
      labelNames: ['stream'] as const,
      async collect() {
        const s = await sample();
        this.reset();
        if (s) this.set({ stream: n.stream }, s.oldestAgeSeconds);
      },
    }),
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
