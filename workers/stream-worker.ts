import type { ConsumerMessages, JsMsg } from 'nats';
import { correlationKey } from '../core/correlation';
import { defaultDetectorRules, metricThresholdSignals, trafficVolumeSignals, type DetectorRules } from '../core/detectors';
import type { MetricRow, SignalRow } from '../core/telemetry';
import type { Logger } from '../service/logger';
import type { Metrics } from '../service/metrics';
import type { KeyOfSignal, TelemetryStore, TelemetryTable } from '../storage/telemetry-store';
import type { NatsClient } from '../streams/nats-client';
import { headerNames } from '../streams/telemetry-publisher';
import { names } from '../streams/topology';
import type { Correlator } from './correlator';

export interface StreamWorkerConfig {
  prefix: string;
  /** Most messages taken in one pull; each message is one accepted request. */
  maxMessages: number;
  /** Longest a message waits for its batch to fill: the flush interval under light load. */
  maxWaitMs: number;
  /** Delay before a failed batch is offered again. */
  retryDelayMs: number;
}

export const defaultStreamWorkerConfig = (prefix: string): StreamWorkerConfig => ({
  prefix,
  maxMessages: 256,
  maxWaitMs: 200,
  retryDelayMs: 1000,
});

interface Entry {
  msg: JsMsg;
  org: string;
  minTs: number;
  maxTs: number;
}


/**
 * Pulls accepted telemetry from the shared durable consumer, writes it to
 * ClickHouse, runs the detectors and the correlator, and only then
 * acknowledges. A crash between the write and the ack redelivers the
 * messages; their rows are looked up by event id and not written twice.
 */
export class StreamWorker {
  private loop?: Promise<void>;
  private messages?: ConsumerMessages;

  constructor(
    private readonly config: StreamWorkerConfig,
    private readonly deps: {
      nats: NatsClient;
      store: TelemetryStore;
      correlator: Correlator;
      metrics: Metrics;
      log: Logger;
      detectorRules?: DetectorRules;
    },
  ) {}

  async start(): Promise<void> {
    const n = names(this.config.prefix);
    const consumer = await this.deps.nats.js().consumers.get(n.stream, n.writers);
    this.messages = await consumer.consume({ max_messages: this.config.maxMessages * 2 });
    this.loop = this.run(this.messages);
  }

  async stop(): Promise<void> {
    this.messages?.stop();
    await this.loop;
  }

  /**
   * Collects messages into a batch and flushes it when it holds maxMessages
   * or when maxWaitMs passed since its first message, whichever comes first.
   * Flushes run one at a time; a full batch waits for the previous flush, so
   * the pull backs off while ClickHouse is busy.
   */
  private async run(messages: ConsumerMessages): Promise<void> {
    let buffer: JsMsg[] = [];
    let timer: NodeJS.Timeout | undefined;
    let flushing: Promise<void> = Promise.resolve();
    const flush = () => {
      clearTimeout(timer);
      timer = undefined;
      const batch = buffer;
      buffer = [];
      if (batch.length) flushing = flushing.then(() => this.handle(batch));
      return flushing;
    };
    try {
      for await (const m of messages) {
        buffer.push(m);
        if (buffer.length >= this.config.maxMessages) await flush();
        else timer ??= setTimeout(() => void flush(), this.config.maxWaitMs);
      }
    } catch (err) {
      this.deps.log.error({ err }, 'telemetry consumer stopped');
    }
    await flush();
  }

  private async handle(batch: JsMsg[]): Promise<void> {
    try {
      await this.process(batch);
      for (const m of batch) m.ack();
      this.deps.metrics.workerBatches.inc({ outcome: 'written' });
    } catch (err) {
      this.deps.metrics.workerBatches.inc({ outcome: 'failed' });
      this.deps.log.error({ err, messages: batch.length }, 'unable to process telemetry batch; it will be redelivered');
      for (const m of batch) m.nak(this.config.retryDelayMs);
    }
  }

  /** Writes, detects and correlates one pulled batch. Exposed for tests that drive a batch directly. */
  async process(batch: JsMsg[]): Promise<void> {
    const groups: Record<'flow' | 'signal' | 'metric', Entry[]> = { flow: [], signal: [], metric: [] };
    for (const msg of batch) {
      const kind = msg.headers?.get(headerNames.kind) as keyof typeof groups;
      if (!groups[kind]) {
        this.deps.log.warn({ subject: msg.subject }, 'skipping a message of unknown kind');
        continue;
      }
      groups[kind].push({
        msg,
        org: msg.headers!.get(headerNames.org),
        minTs: Number(msg.headers!.get(headerNames.minTs)),
        maxTs: Number(msg.headers!.get(headerNames.maxTs)),
      });
    }
    await this.writeEntries('flows', groups.flow);
    const metricRows = await this.writeEntries('metrics', groups.metric, true);
    const signalRows = await this.writeEntries('signals', groups.signal, true);
    const derived = [
      ...metricThresholdSignals(metricRows as MetricRow[], this.rules),
      ...(await this.trafficSignals(groups.flow)),
    ];
    const written = await this.writeDerivedSignals(derived);
    await this.correlate([...(signalRows as SignalRow[]), ...written]);
  }

  private get rules(): DetectorRules {
    return this.deps.detectorRules ?? defaultDetectorRules;
  }

  /**
   * Writes the entries' rows in one insert. Rows of a redelivered message
   * that ClickHouse already holds are dropped first. Returns the parsed rows
   * when asked (signals and metrics feed the detectors and the correlator).
   */
  private async writeEntries(table: TelemetryTable, entries: Entry[], parse = false): Promise<object[]> {
    if (entries.length === 0) return [];
    const parts: Buffer[] = [];
    const parsed: object[] = [];
    for (const entry of entries) {
      if (!entry.msg.info.redelivered) {
        parts.push(Buffer.from(entry.msg.data));
        if (parse) parsed.push(...parseLines(entry.msg.data));
        continue;
      }
      const rows = parseLines(entry.msg.data) as Array<{ event_id: string }>;
      const existing = await this.deps.store.existingEventIds(table, entry.org, entry.minTs, entry.maxTs, rows.map((r) => r.event_id));
      const fresh = rows.filter((r) => !existing.has(r.event_id));
      this.deps.metrics.duplicatesSkipped.inc({ table }, rows.length - fresh.length);
      if (fresh.length) parts.push(Buffer.from(fresh.map((r) => JSON.stringify(r)).join('\n') + '\n'));
      if (parse) parsed.push(...fresh);
    }
    if (parts.length) {
      const data = Buffer.concat(parts);
      await this.deps.store.insert(table, data);
      this.deps.metrics.rowsWritten.inc({ table }, countLines(data));
    }
    return parsed;
  }

  private async trafficSignals(entries: Entry[]): Promise<SignalRow[]> {
    const ranges = new Map<string, { minTs: number; maxTs: number }>();
    for (const e of entries) {
      const r = ranges.get(e.org);
      ranges.set(e.org, r ? { minTs: Math.min(r.minTs, e.minTs), maxTs: Math.max(r.maxTs, e.maxTs) } : { minTs: e.minTs, maxTs: e.maxTs });
    }
    const out: SignalRow[] = [];
    for (const [org, r] of ranges) {
      const minutes = await this.deps.store.destinationMinutesOver(org, r.minTs, r.maxTs, this.rules.bytesPerMinute);
      out.push(...trafficVolumeSignals(minutes, this.rules, Date.now()));
    }
    return out;
  }

  /** Derived signals have ids from their inputs: those already stored are not written again. */
  private async writeDerivedSignals(signals: SignalRow[]): Promise<SignalRow[]> {
    const fresh: SignalRow[] = [];
    for (const [org, group] of groupBy(signals, (s) => s.org_id)) {
      const ts = group.map((s) => s.ts);
      const existing = await this.deps.store.existingEventIds('signals', org, Math.min(...ts), Math.max(...ts), group.map((s) => s.event_id));
      const seen = new Set<string>();
      for (const s of group) {
        if (existing.has(s.event_id) || seen.has(s.event_id)) continue;
        seen.add(s.event_id);
        fresh.push(s);
      }
    }
    if (fresh.length) {
      await this.deps.store.insert('signals', fresh.map((s) => JSON.stringify(s)).join('\n') + '\n');
      this.deps.metrics.rowsWritten.inc({ table: 'signals' }, fresh.length);
    }
    return fresh;
  }

  private async correlate(signals: SignalRow[]): Promise<void> {
    for (const [org, group] of groupBy(signals, (s) => s.org_id)) {
      const keys = new Map<string, KeyOfSignal>();
      for (const s of group) keys.set(correlationKey(s), { service: s.service, environment: s.environment, region: s.region });
      await this.deps.correlator.recompute(org, [...keys.values()]);
    }
  }
}

function parseLines(data: Uint8Array): object[] {
  const text = Buffer.from(data).toString('utf8');
  const out: object[] = [];
  for (const line of text.split('\n')) if (line) out.push(JSON.parse(line) as object);
  return out;
}

function countLines(data: Buffer): number {
  let n = 0;
  for (let i = data.indexOf(10); i !== -1; i = data.indexOf(10, i + 1)) n += 1;
  return n;
}

function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const list = out.get(key);
    if (list) list.push(item);
    else out.set(key, [item]);
  }
  return out;
}

