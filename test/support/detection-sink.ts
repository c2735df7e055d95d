import { Registry } from 'prom-client';
import { historyOf, defaultDetectionRules, type VersionedRules } from '../../core/detection-rules';
import type { CrossedTarget, RateQuiet } from '../../core/detection/quiet';
import { defaultRateRules, type RateRules } from '../../core/detection/rules';
import type { RateFlow } from '../../core/detection/traffic-class';
import type { SignalRow } from '../../core/telemetry';
import { telemetryHeaderNames } from '../../core/telemetry-headers';
import { createLogger } from '../../observability/logger';
import type { AttackWindow } from '../../storage/attack-windows-repo';
import { detectionMetrics } from '../../workers/detection/detection-metrics';
import { DetectionSink, type DetectionMessage } from '../../workers/detection/detection-sink';
import { flow, syn, t0 } from './detection-flows';

/** A message of the detection feed as a plain object that records what the sink did with it. */
export class FakeMessage implements DetectionMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: { get(key: string): string };
  acked = false;
  naks = 0;
  workings = 0;
  termed = false;
  constructor(
    readonly flows: RateFlow[],
    org = 'org1',
  ) {
    this.subject = `nettel.detect.flow.${org}`;
    this.data = Buffer.from(flows.map((f) => JSON.stringify({ org_id: org, event_id: 'e', ...f })).join('\n') + '\n');
    const h: Record<string, string> = { [telemetryHeaderNames.kind]: 'flow', [telemetryHeaderNames.org]: org };
    this.headers = { get: (k) => h[k] ?? '' };
  }
  term() {
    this.termed = true;
  }
  ack() {
    this.acked = true;
  }
  nak() {
    this.naks += 1;
  }
  working() {
    this.workings += 1;
  }
}

export const rates: RateRules = { ...defaultRateRules, thresholds: { total: { pps: 100 } } };

/**
 * The sink as a test drives it one message at a time: each call returns once
 * the message is counted and what it decided is written (the sink itself
 * writes beside the counting of the next messages; `pipelined` is the sink
 * as is, for the tests of that).
 */
function settled(sink: DetectionSink<FakeMessage>) {
  return {
    add: async (m: FakeMessage) => {
      await sink.add(m);
      await sink.flush();
    },
    tick: async () => {
      await sink.tick();
      await sink.flush();
    },
    keepAlive: () => sink.keepAlive(),
  };
}

export function harness(
  /** `stored`: the signals ClickHouse holds, shared with another harness (another holder of the lock). */
  opts: { rates?: RateRules; failWrites?: () => boolean; crossing?: CrossedTarget[]; writesHeld?: Promise<void>; maxQueuedSteps?: number; stored?: Map<string, SignalRow> } = {},
) {
  const resolved: Array<[string, RateQuiet]> = [];
  const stored = opts.stored ?? new Map<string, SignalRow>();
  /** Lookups of stored signal ids. */
  const lookups = { count: 0 };
  /** Every signal id inserted, in order: one stored twice shows twice. */
  const inserted: string[] = [];
  const attacks: AttackWindow[] = [];
  const recomputed: string[] = [];
  /** The signals of each insert, in order. */
  const signalInserts: number[] = [];
  const registry = new Registry();
  // The screen takes event times up to a day ahead of the clock: the clock starts at the flows' first second.
  let clock = t0;
  const version: VersionedRules = { version: 1, rules: { ...defaultDetectionRules, rates: opts.rates ?? rates }, created_at: 1, actor: 'k' };
  const sink = new DetectionSink<FakeMessage>(
    { idleFlushMs: 5_000, screen: { subjectPrefix: 'nettel.detect.flow.', maxBytes: 1024 * 1024 }, maxQueuedSteps: opts.maxQueuedSteps ?? 256 },
    {
      rules: { history: () => Promise.resolve(historyOf([version])) },
      workspaces: { exists: (org) => Promise.resolve(org !== 'org_gone') },
      resolutions: {
        resolve: (org, quiet) => (resolved.push([org, quiet]), Promise.resolve('resolved' as const)),
        crossings: () => Promise.resolve(opts.crossing ?? []),
      },
      signals: {
        existingEventIds: (_t, _o, _a, _b, ids) => ((lookups.count += 1), Promise.resolve(new Map(ids.filter((id) => stored.has(id)).map((id) => [id, ''])))),
        insertSignals: async (ndjson) => {
          // A test may hold every write until it lets them go, to count messages while a write is under way.
          await opts.writesHeld;
          signalInserts.push(ndjson.trim().split('\n').length);
          if (opts.failWrites?.()) throw new Error('ClickHouse refused the insert');
          for (const line of ndjson.trim().split('\n')) {
            const s = JSON.parse(line) as SignalRow;
            stored.set(s.event_id, s);
            inserted.push(s.event_id);
          }
        },
      },
      attacks: { insert: (rows) => (attacks.push(...rows), Promise.resolve()) },
      correlator: { recompute: (org, changes) => (recomputed.push(...changes.map((c) => `${org}/${c.service}`)), Promise.resolve()) },
      metrics: detectionMetrics(registry),
      log: createLogger('silent', 'test'),
      now: () => clock,
    },
  );
  return { sink: settled(sink), pipelined: sink, stored, lookups, inserted, signalInserts, attacks, recomputed, registry, resolved, advanceClock: (ms: number) => (clock += ms) };
}

/** A SYN flood on 203.0.113.9: `perSecond` one-packet flows a second for `seconds`, from 10 sources. */
export const synFlood = (seconds: number, perSecond = 200, start = t0): RateFlow[] =>
  Array.from({ length: seconds * perSecond }, (_, i) =>
    flow({ ts: start + Math.floor((i * 1000) / perSecond), src_ip: `198.51.100.${i % 10}`, src_port: 1024 + i, dst_port: 80, packets: 1, bytes: 60, tcp_flags: syn }),
  );
