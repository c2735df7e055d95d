import { headers as natsHeaders, type ConsumerMessages, type JsMsg } from 'nats';
import { correlationKey } from '../core/correlation';
import { defaultDetectorRules, metricThresholdSignals, trafficVolumeSignals, type DetectorRules } from '../core/detectors';
import type { MetricRow, SignalRow } from '../core/telemetry';
import type { Logger } from '../observability/logger';
import { ClickHouseError } from '../storage/clickhouse';
import type { Registry } from '../observability/metrics';
import type { TelemetryStore, TelemetryTable } from '../storage/telemetry-store';
import type { NatsClient } from '../streams/nats-client';
import { headerNames } from '../streams/telemetry-publisher';
import { names } from '../streams/topology';
import type { Correlator, KeyChange } from '../application/correlator';
import { streamWorkerMetrics } from './stream-worker-metrics';

export interface StreamWorkerConfig {
  prefix: string;
  /** Most messages taken in one pull; each message is one accepted request. */
  maxMessages: number;
  /** Longest a message waits for its batch to fill: the flush interval under light load. */
  maxWaitMs: number;
  /** Delay before a failed message is offered again; doubles with each delivery, up to 30 s. */
  retryDelayMs: number;
  /** Deliveries after which a message ClickHouse keeps refusing goes to the dead-letter stream. */
  maxDeliveries: number;
  /** The consumer's ack wait: messages a worker holds are kept alive well within it. */
  ackWaitMs: number;
}

export const defaultStreamWorkerConfig = (prefix: string): StreamWorkerConfig => ({
  prefix,
  maxMessages: 256,
  maxWaitMs: 200,
  retryDelayMs: 1000,
  maxDeliveries: 10,
  ackWaitMs: 30_000,
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
      registry: Registry;
      log: Logger;
      detectorRules?: DetectorRules;
    },
  ) {
    this.metrics = streamWorkerMetrics(deps.registry);
  }

  private readonly metrics;

  private running = false;

  async start(): Promise<void> {
    this.running = true;
    const n = names(this.config.prefix);
    const consumer = await this.deps.nats.js().consumers.get(n.stream, n.writers);
    this.messages = await consumer.consume({ max_messages: this.config.maxMessages });
    this.loop = this.run(this.messages);
  }

  /** For /healthz: up while the worker consumes. */
  async probe(): Promise<{ detail: string }> {
    if (!this.messages || !this.running) throw new Error('not consuming');
    return { detail: 'consuming' };
  }

  async stop(): Promise<void> {
    this.running = false;
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
      if (batch.length) {
        // From here until it is acknowledged, the batch must not be redelivered to another worker.
        const heartbeat = this.keepAlive(batch);
        flushing = flushing.then(() => this.handle(batch)).finally(() => clearInterval(heartbeat));
      }
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

  /**
   * A message published longer ago than half the ack wait may have waited in
   * this worker's pull buffer while JetStream handed a copy to another worker:
   * its rows are checked before they are written. (Backlogs drained after an
   * outage pay that check; fresh traffic does not.)
   */
  private mayHaveACopy(m: JsMsg): boolean {
    return Date.now() - Number(m.info.timestampNanos) / 1e6 > this.config.ackWaitMs / 2;
  }

  /** Tells JetStream the worker is still on the messages of a batch it is writing. */
  private keepAlive(batch: JsMsg[]): NodeJS.Timeout {
    return setInterval(() => {
      for (const m of batch) m.working();
    }, Math.max(500, Math.floor(this.config.ackWaitMs / 3)));
  }

  private async handle(batch: JsMsg[]): Promise<void> {
    try {
      await this.process(batch);
      for (const m of batch) m.ack();
      this.metrics.batches.inc({ outcome: 'written' });
      return;
    } catch (err) {
      this.metrics.batches.inc({ outcome: 'failed' });
      this.deps.log.error({ err, messages: batch.length }, 'unable to process telemetry batch; retrying its messages one by one');
    }
    // One bad message must not hold the others back. The failed attempt may
    // have written some rows, so every message is checked for them first.
    for (const m of batch) {
      try {
        await this.process([m], { retry: true });
        m.ack();
      } catch (err) {
        await this.giveBack(m, err);
      }
    }
  }

  /**
   * A message that failed is offered again later, with a growing delay. When
   * ClickHouse itself refused it (a server error code, not an outage) for
   * maxDeliveries deliveries, it goes to the dead-letter stream instead.
   */
  private async giveBack(m: JsMsg, err: unknown): Promise<void> {
    const refusedByClickHouse = !(err instanceof ClickHouseError) || err.code !== undefined;
    if (refusedByClickHouse && m.info.redeliveryCount >= this.config.maxDeliveries) {
      try {
        const n = names(this.config.prefix);
        const h = natsHeaders();
        for (const [key, values] of m.headers ?? []) for (const v of values) h.append(key, v);
        h.set('Nettel-Error', String((err as Error).message ?? err).slice(0, 1000));
        await this.deps.nats.js().publish(n.deadLetterSubject(m.headers?.get(headerNames.kind) ?? 'unknown', m.headers?.get(headerNames.org) ?? 'unknown'), m.data, { headers: h });
        m.term();
        this.metrics.deadLetters.inc();
        this.deps.log.error({ err, subject: m.subject, deliveries: m.info.redeliveryCount }, 'message moved to the dead-letter stream');
        return;
      } catch (publishErr) {
        this.deps.log.error({ err: publishErr }, 'unable to dead-letter a message; it will be redelivered');
      }
    }
    m.nak(Math.min(30_000, this.config.retryDelayMs * 2 ** Math.max(0, m.info.redeliveryCount - 1)));
  }

  /**
   * Writes, detects and correlates one pulled batch. `retry` treats every
   * message as redelivered (its rows may be stored already). Exposed for
   * tests that drive a batch directly.
   */
  async process(batch: JsMsg[], opts: { retry?: boolean } = {}): Promise<void> {
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
    const retry = opts.retry ?? false;
    await this.writeEntries('flows', groups.flow, { retry });
    const metricRows = await this.writeEntries('metrics', groups.metric, { retry, parse: true });
    const signalRows = await this.writeEntries('signals', groups.signal, { retry, parse: true });
    const derived = [
      ...metricThresholdSignals(metricRows as MetricRow[], this.rules),
      ...(await this.trafficSignals(groups.flow)),
    ];
    const written = await this.writeDerivedSignals(derived, retry);
    await this.correlate([...(signalRows as SignalRow[]), ...written]);
  }

  private get rules(): DetectorRules {
    return this.deps.detectorRules ?? defaultDetectorRules;
  }

  /**
   * Writes the entries' rows in one insert. Rows of a redelivered message
   * that ClickHouse already holds are dropped first. Returns every parsed row
   * when asked (signals and metrics feed the detectors and the correlator).
   */
  private async writeEntries(table: TelemetryTable, entries: Entry[], opts: { retry: boolean; parse?: boolean }): Promise<object[]> {
    if (entries.length === 0) return [];
    const parse = opts.parse ?? false;
    const parts: Uint8Array[] = [];
    const parsed: object[] = [];
    for (const entry of entries) {
      if (!entry.msg.info.redelivered && !opts.retry && !this.mayHaveACopy(entry.msg)) {
        // The message's own bytes: Buffer.concat below is the one copy.
        parts.push(entry.msg.data);
        if (parse) for (const row of parseLines(entry.msg.data)) parsed.push(row);
        continue;
      }
      const rows = parseLines(entry.msg.data) as Array<{ event_id: string }>;
      const ids = rows.map((r) => r.event_id).filter((id): id is string => typeof id === 'string');
      const existing = await this.deps.store.existingEventIds(table, entry.org, entry.minTs, entry.maxTs, ids);
      const fresh = rows.filter((r) => !existing.has(r.event_id));
      this.metrics.duplicatesSkipped.inc({ table }, rows.length - fresh.length);
      if (fresh.length) parts.push(Buffer.from(fresh.map((r) => JSON.stringify(r)).join('\n') + '\n'));
      // Every row, stored before or not, feeds the detectors and the correlator: the
      // attempt that stored them may have failed before those ran. Both are idempotent.
      if (parse) for (const row of rows) parsed.push(row);
    }
    if (parts.length) {
      const data = Buffer.concat(parts);
      await this.deps.store.insert(table, data);
      this.metrics.rowsWritten.inc({ table }, countLines(data));
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
  /**
   * Stores the derived signals not stored yet and returns those to correlate:
   * the fresh ones, or on a retry all of them (the attempt that stored them may
   * have failed before correlating).
   */
  private async writeDerivedSignals(signals: SignalRow[], retry: boolean): Promise<SignalRow[]> {
    const fresh: SignalRow[] = [];
    const all: SignalRow[] = [];
    for (const [org, group] of groupBy(signals, (s) => s.org_id)) {
      const minTs = group.reduce((m, s) => Math.min(m, s.ts), Number.MAX_SAFE_INTEGER);
      const maxTs = group.reduce((m, s) => Math.max(m, s.ts), 0);
      const existing = await this.deps.store.existingEventIds('signals', org, minTs, maxTs, group.map((s) => s.event_id));
      const seen = new Set<string>();
      for (const s of group) {
        if (seen.has(s.event_id)) continue;
        seen.add(s.event_id);
        all.push(s);
        if (!existing.has(s.event_id)) fresh.push(s);
      }
    }
    if (fresh.length) {
      await this.deps.store.insert('signals', fresh.map((s) => JSON.stringify(s)).join('\n') + '\n');
      this.metrics.rowsWritten.inc({ table: 'signals' }, fresh.length);
    }
    return retry ? all : fresh;
  }

  private async correlate(signals: SignalRow[]): Promise<void> {
    for (const [org, group] of groupBy(signals, (s) => s.org_id)) {
      const changes = new Map<string, KeyChange>();
      for (const s of group) {
        const key = correlationKey(s);
        const known = changes.get(key);
        if (known) known.since = Math.min(known.since, s.ts);
        else changes.set(key, { service: s.service, environment: s.environment, region: s.region, since: s.ts });
      }
      await this.deps.correlator.recompute(org, [...changes.values()]);
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

