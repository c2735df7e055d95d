import { historyOf } from '../core/detection-rules';
import { flowRowJson, type FlowInput } from '../core/flow';
import { telemetryHeaderNames } from '../core/telemetry-headers';
import { createLogger } from '../observability/logger';
import { createRegistry } from '../observability/metrics';
import { detectionMetrics } from '../workers/detection/detection-metrics';
import { DetectionSink, type DetectionMessage } from '../workers/detection/detection-sink';

/**
 * `node dist/bench/detection-feed.js`: the rate detectors' consumer on
 * 100,000 collected flows (exporter fields present) in 20 messages of
 * 5,000, 5,000 flows a second of event time to 5,000 destinations, then
 * to 500, then 12 a second to 4,096 (scenario 1's flows, spread over a day): reading
 * each copy's digest, counting them, closing and judging windows and
 * acknowledging, with the writes faked. Ordinary traffic: no window crosses
 * the default thresholds, as almost always. Prints the CPU time per flow;
 * the machine is shared, so CPU time, not wall time.
 */
const org = 'org_3kq9v2m8x1';
const prefix = 'nettel';
const flowsPerMessage = 5_000;
const messages = 20;
const t0 = 1_796_000_000_000;

function message(m: number, destinations: number, flowsPerSecond: number): DetectionMessage {
  const lines: string[] = [];
  for (let j = 0; j < flowsPerMessage; j += 1) {
    const i = m * flowsPerMessage + j;
    const input: FlowInput = {
      src_ip: `10.${i % 256}.${(i >> 8) % 256}.7`,
      dst_ip: `203.0.${(i % destinations) >> 8}.${i % destinations % 256}`,
      src_port: 1024 + (i % 50_000),
      dst_port: 443,
      protocol: i % 3 ? 'tcp' : 'udp',
      bytes: 1_000 * (1 + (i % 9)),
      packets: 1 + (i % 9),
      timestamp: t0 + Math.floor((i * 1000) / flowsPerSecond),
      exporter: '192.0.2.17',
      in_if: 3,
      out_if: 7,
      tcp_flags: 24,
    };
    lines.push(flowRowJson(input, { org_id: org, event_id: `evt_${i.toString(36).padStart(12, '0')}`, ts: 0, received_at: t0 }).digest);
  }
  // The copy as the writers publish it: the message's detection digest (core/flow.ts flowDigestLine).
  const headers: Record<string, string> = { [telemetryHeaderNames.kind]: 'flow', [telemetryHeaderNames.org]: org, [telemetryHeaderNames.digest]: '1' };
  return {
    subject: `${prefix}.detect.flow.${org}`,
    data: Buffer.from(lines.join('\n') + '\n'),
    headers: { get: (k) => headers[k] ?? '' },
    ack: () => undefined,
    nak: () => undefined,
    working: () => undefined,
    term: () => undefined,
  };
}

async function run(copies: DetectionMessage[]): Promise<void> {
  const history = historyOf([]);
  const registry = createRegistry();
  const sink = new DetectionSink<DetectionMessage>(
    { idleFlushMs: 5_000, screen: { subjectPrefix: `${prefix}.detect.flow.`, maxBytes: 8 * 1024 * 1024 } },
    {
      rules: { history: () => Promise.resolve(history) },
      workspaces: { exists: () => Promise.resolve(true) },
      resolutions: { resolve: () => Promise.resolve('resolved' as const), crossings: () => Promise.resolve([]) },
      signals: { existingEventIds: () => Promise.resolve(new Map()), insertSignals: () => Promise.resolve() },
      attacks: { insert: () => Promise.resolve() },
      correlator: { recompute: () => Promise.resolve() },
      metrics: detectionMetrics(registry),
      log: createLogger('silent', 'bench'),
      // The screen takes event times up to a day ahead of the clock.
      now: () => t0,
    },
  );
  for (const m of copies) await sink.add(m);
  // Every copy passed the screen and every flow was counted: a bench of refused messages would measure nothing.
  const counted = (await registry.getSingleMetric('nettel_detection_flows_total')!.get()).values.find((v) => v.labels.outcome === 'counted')?.value ?? 0;
  if (counted !== copies.length * flowsPerMessage) throw new Error(`counted ${counted} flows of ${copies.length * flowsPerMessage}`);
}

async function measure(destinations: number, flowsPerSecond = 5_000): Promise<void> {
  const copies = Array.from({ length: messages }, (_, m) => message(m, destinations, flowsPerSecond));
  await run(copies);
  await run(copies);
  const rounds = 5;
  const before = process.cpuUsage();
  for (let r = 0; r < rounds; r += 1) await run(copies);
  const used = process.cpuUsage(before);
  const flows = rounds * messages * flowsPerMessage;
  console.log(`detection consumer, ${destinations} destinations, ${flowsPerSecond} flows a second of event time: ${((used.user + used.system) / flows).toFixed(2)} µs CPU a flow over ${flows} flows`);
}

async function main(): Promise<void> {
  // One flow a second to each destination (the costliest shape: every window judges every destination), then ten.
  await measure(5_000);
  await measure(500);
  // Scenario 1's shape: a million flows over a day of event time, about 12 a second, each window holding a few.
  await measure(4_096, 12);
}

void main();
