import { connect } from 'nats';
import { names } from '../streams/names';
import { percentile } from './data';
import { pacedLoop } from './paced';

/**
 * Where a latency under load waits: once a second, the backlog of the
 * writers' consumer on the telemetry stream (flows not yet in ClickHouse) and
 * of the rate detectors' consumer on their feed (copies not yet judged), each
 * as messages not yet delivered (`pending`) and delivered but not yet
 * acknowledged (`ack_pending`). The detectors hold each copy until its
 * windows close, by design: their `ack_pending` is about 6 s of messages even
 * with no backlog. A sample whose request fails is counted, not kept.
 */
export async function backlogSampler(natsUrl: string, prefix: string, everyMs = 1_000) {
  const nc = await connect({ servers: natsUrl });
  const jsm = await nc.jetstreamManager();
  const n = names(prefix);
  const started = Date.now();
  // [seconds since the start, writers pending, writers ack pending, detector pending, detector ack pending]
  const samples: Array<[number, number, number, number, number]> = [];
  let failed = 0;
  const inFlight: Array<Promise<void>> = [];
  const sample = async () => {
    const [w, d] = await Promise.all([jsm.consumers.info(n.stream, n.writers), jsm.consumers.info(n.detection, n.detector)]);
    samples.push([Math.round((Date.now() - started) / 100) / 10, w.num_pending, w.num_ack_pending, d.num_pending, d.num_ack_pending]);
  };
  const loop = pacedLoop(everyMs, () => void inFlight.push(sample().catch(() => void (failed += 1))));
  const stats = (column: number) => {
    const values = samples.map((s) => s[column]!);
    return { p50: percentile(values, 50), max: values.length ? Math.max(...values) : NaN };
  };
  return {
    async stop() {
      await loop.stop();
      await Promise.all(inFlight);
      await nc.close();
      return {
        every_ms: everyMs,
        failed_samples: failed,
        writers: { pending: stats(1), ack_pending: stats(2) },
        detector: { pending: stats(3), ack_pending: stats(4) },
        samples_columns: ['s', 'writers_pending', 'writers_ack_pending', 'detector_pending', 'detector_ack_pending'],
        samples: samples.sort((a, b) => a[0] - b[0]),
      };
    },
  };
}
