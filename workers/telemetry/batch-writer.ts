import type { z } from 'zod';
import { detectorRulesOf, historyOf, inForce } from '../../core/detection-rules';
import { metricThresholdSignals, trafficVolumeSignals, type DestinationMinute, type DetectorRules } from '../../core/detectors';
import { metricRowSchema, signalRowSchema, type MetricRow, type SignalRow } from '../../core/telemetry';
import { readTelemetryHeaders, rowsOf } from '../../core/telemetry-headers';
import type { Logger } from '../../observability/logger';
import type { TelemetryTable } from '../../storage/telemetry-store';
import { correlateSignals, groupBy, storeDerivedSignals } from '../../application/derived-signals';
import type { DetectionRulesSource } from '../../application/detection-rules-service';
import { storedRows, type RowCheck, type StoredRows } from './stored-rows';
import type { StreamWorkerMetrics } from './stream-worker-metrics';
import type { IncidentCorrelation, TelemetryWrites, WorkMessage } from './stream-worker-ports';

interface Entry {
  msg: WorkMessage;
  org: string;
  minTs: number;
  maxTs: number;
}

/** How late a client's retry of an Idempotency-Key batch is still recognized, for records posted without a timestamp. */
const idempotentRetryHorizonMs = 24 * 3_600_000;

/** A message whose body is not the NDJSON the API publishes: no retry will change it. */
export class UnreadableMessageError extends Error {
  constructor(subject: string, options?: { cause?: unknown }) {
    super(`unable to read the message on ${subject}: ${String((options?.cause as Error | undefined)?.message ?? 'not NDJSON')}`, options);
    this.name = 'UnreadableMessageError';
  }
}

export interface BatchWriterDeps {
  store: TelemetryWrites;
  correlator: IncidentCorrelation;
  metrics: StreamWorkerMetrics;
  log: Logger;
  /** Each workspace's rules: the detectors judge a batch by the rules in force when it is written. Defaults when absent. */
  rules?: DetectionRulesSource;
  /** Whether a message may have been written already though JetStream delivers it for the first time. */
  mayHaveACopy: (message: WorkMessage) => boolean;
  now?: () => number;
}

/**
 * Writes one batch: its rows into ClickHouse (one insert per table), the
 * signals the detectors derive from them, then the incidents of the keys it
 * touched. Redelivered messages, and messages whose event ids are
 * deterministic, are checked for rows ClickHouse already holds (one lookup
 * per table and workspace for the batch), so neither a crash between a write
 * and its ack nor a client's late retry doubles a row.
 */
export class BatchWriter {
  constructor(private readonly deps: BatchWriterDeps) {}

  /** `retry` treats every message as redelivered (its rows may be stored already). */
  async process(batch: WorkMessage[], opts: { retry?: boolean } = {}): Promise<void> {
    const rest = await this.write(batch, opts);
    await rest();
  }

  /**
   * Stores the batch's rows, one insert per table; resolves to the rest of
   * its processing: the signals derived from the stored rows, then the
   * incidents they touch (the stream worker runs it while the next batch is
   * written).
   */
  async write(batch: WorkMessage[], opts: { retry?: boolean } = {}): Promise<() => Promise<void>> {
    const groups: Record<'flow' | 'signal' | 'metric', Entry[]> = { flow: [], signal: [], metric: [] };
    for (const msg of batch) {
      const { kind, org, minTs, maxTs } = readTelemetryHeaders(msg.headers);
      if (!Object.hasOwn(groups, kind)) {
        this.deps.log.warn({ subject: msg.subject }, 'skipping a message of unknown kind');
        continue;
      }
      groups[kind as keyof typeof groups].push({ msg, org, minTs, maxTs });
    }
    const retry = opts.retry ?? false;
    await this.writeEntries('flows', groups.flow, { retry });
    const metricRows = await this.writeEntries('metrics', groups.metric, { retry, parse: true });
    const signalRows = await this.writeEntries('signals', groups.signal, { retry, parse: true });
    return async () => {
      const derived = [...(await this.metricSignals(metricRows as MetricRow[])), ...(await this.trafficSignals(groups.flow))];
      const written = await this.writeDerivedSignals(derived, retry);
      await this.correlate([...(signalRows as SignalRow[]), ...written]);
    };
  }

  /** The detector rules in force for a workspace. */
  private async rulesOf(orgId: string): Promise<DetectorRules> {
    return detectorRulesOf(inForce(this.deps.rules ? await this.deps.rules.history(orgId) : historyOf([])));
  }

  private async metricSignals(rows: MetricRow[]): Promise<SignalRow[]> {
    const out: SignalRow[] = [];
    for (const [org, group] of groupBy(rows, (r) => r.org_id)) out.push(...metricThresholdSignals(group, await this.rulesOf(org)));
    return out;
  }

  /**
   * Writes the entries' rows in one insert. Rows of messages that may have
   * been written before and that ClickHouse already holds are dropped first,
   * looked up for the whole batch at once (stored-rows.ts). Returns
   * every parsed row when asked (signals and metrics feed the detectors and
   * the correlator).
   */
  private async writeEntries(table: TelemetryTable, entries: Entry[], opts: { retry: boolean; parse?: boolean }): Promise<object[]> {
    if (entries.length === 0) return [];
    const parse = opts.parse ?? false;
    const checked = new Map<Entry, Array<{ event_id: string }>>();
    for (const entry of entries) if (this.mayBeStored(entry.msg, opts.retry)) checked.set(entry, parseLines(entry, table) as Array<{ event_id: string }>);
    const { stored, writes } = await this.storedOf(table, checked);
    if (writes.size > 0) await this.completeRollups(writes);
    const parts: Uint8Array[] = [];
    const parsed: object[] = [];
    // Ids of checked rows this batch writes: two copies of one batch pulled together are both checked before either is stored.
    const taken = new Set<string>();
    for (const entry of entries) {
      const rows = checked.get(entry);
      if (!rows) {
        // The message's own rows (its digest, if any, is the detectors'): Buffer.concat below is the one copy.
        parts.push(rowsOf(entry.msg));
        if (parse) for (const row of parseLines(entry, table)) parsed.push(row);
        continue;
      }
      const fresh = rows.filter((r) => !stored.has(r.event_id) && !taken.has(r.event_id));
      for (const r of fresh) taken.add(r.event_id);
      this.deps.metrics.duplicatesSkipped.inc({ table }, rows.length - fresh.length);
      if (fresh.length) parts.push(Buffer.from(fresh.map((r) => JSON.stringify(r)).join('\n') + '\n'));
      // Every row, stored before or not, feeds the detectors and the correlator: the
      // attempt that stored them may have failed before those ran. Both are idempotent.
      if (parse) for (const row of rows) parsed.push(row);
    }
    if (parts.length) {
      const data = Buffer.concat(parts);
      await this.insert(table, data, countLines(data));
    }
    return parsed;
  }

  /**
   * Rows found stored were written by an attempt that may have been cut
   * between the flows and their rollups: the rollups get what they lack of
   * those writes before anything else is written (storage/rollup-repair.ts).
   */
  private async completeRollups(writes: Set<string>): Promise<void> {
    for (const r of await this.deps.store.completeRollups([...writes])) {
      this.deps.metrics.rollupRepairs.inc({ table: r.table, outcome: r.outcome });
      if (r.outcome === 'partial') this.deps.log.error({ table: r.table, writeId: r.writeId }, 'a rollup holds part of a write of flows; its sums stay off');
      else this.deps.log.warn({ table: r.table, writeId: r.writeId }, 'a rollup lacked a stored write of flows; refed from the stored flows');
    }
  }

  /** Which of the checked messages' event ids ClickHouse holds, asked once for the batch (per workspace). */
  private async storedOf(table: TelemetryTable, checked: Map<Entry, Array<{ event_id: string }>>): Promise<StoredRows> {
    const checks: RowCheck[] = [...checked].map(([entry, rows]) => ({
      org: entry.org,
      fromTs: this.earliestCopy(entry),
      toTs: entry.maxTs,
      ids: rows.map((r) => r.event_id).filter((id): id is string => typeof id === 'string'),
    }));
    const found = await storedRows(this.deps.store, table, checks);
    if (found.byRequest) this.deps.metrics.rowsChecked.inc({ table, by: 'request' }, found.byRequest);
    if (found.byId) this.deps.metrics.rowsChecked.inc({ table, by: 'event_id' }, found.byId);
    return found;
  }

  /**
   * The earliest event time a stored copy of the message's rows may have. A
   * record posted without a timestamp takes its receive time, so a client's
   * late retry of an Idempotency-Key batch carries later times than the copy
   * stored at the first attempt: such messages are looked up over a retry
   * horizon before their own times.
   */
  private earliestCopy(entry: Entry): number {
    const idempotent = readTelemetryHeaders(entry.msg.headers).idempotent;
    return idempotent ? Math.max(0, entry.minTs - idempotentRetryHorizonMs) : entry.minTs;
  }

  /**
   * Whether a message's rows may be stored already: it was delivered or
   * tried before, the source may have handed it out before, or its event ids
   * are deterministic. A client's retry with the same Idempotency-Key that
   * JetStream no longer recognizes (past its duplicate window) arrives as a
   * new message with the same rows; coalesced messages have fresh random ids.
   */
  private mayBeStored(msg: WorkMessage, retry: boolean): boolean {
    if (msg.info.redelivered || retry) return true;
    return readTelemetryHeaders(msg.headers).idempotent || this.deps.mayHaveACopy(msg);
  }

  /** One insert, timed and sized: only a successful insert's time is observed. */
  private async insert(table: TelemetryTable, data: Buffer | string, rows: number): Promise<void> {
    const done = this.deps.metrics.writeSeconds.startTimer({ table });
    await this.deps.store.insert(table, data);
    done();
    this.deps.metrics.writeRows.observe({ table }, rows);
    this.deps.metrics.rowsWritten.inc({ table }, rows);
  }

  private async trafficSignals(entries: Entry[]): Promise<SignalRow[]> {
    const ranges = new Map<string, { minTs: number; maxTs: number }>();
    for (const e of entries) {
      const r = ranges.get(e.org);
      ranges.set(e.org, r ? { minTs: Math.min(r.minTs, e.minTs), maxTs: Math.max(r.maxTs, e.maxTs) } : { minTs: e.minTs, maxTs: e.maxTs });
    }
    const out: SignalRow[] = [];
    for (const [org, r] of ranges) {
      const rules = await this.rulesOf(org);
      const minutes: DestinationMinute[] = await this.deps.store.destinationMinutesOver(org, r.minTs, r.maxTs, rules.bytesPerMinute);
      if (Object.keys(rules.bytesPerMinuteByExporter).length > 0) {
        minutes.push(...(await this.deps.store.exporterDestinationMinutesOver(org, r.minTs, r.maxTs, rules.bytesPerMinuteByExporter)));
      }
      out.push(...trafficVolumeSignals(minutes, rules, (this.deps.now ?? Date.now)()));
    }
    return out;
  }

  /** Derived signals are stored once (ids from their inputs) and correlated as every detector's are (application/derived-signals.ts). */
  private writeDerivedSignals(signals: SignalRow[], retry: boolean): Promise<SignalRow[]> {
    const writes = {
      existingEventIds: (table: 'signals', org: string, minTs: number, maxTs: number, ids: string[]) => this.deps.store.existingEventIds(table, org, minTs, maxTs, ids),
      insertSignals: (ndjson: string, rows: number) => this.insert('signals', ndjson, rows),
    };
    return storeDerivedSignals(writes, signals, retry);
  }

  private correlate(signals: SignalRow[]): Promise<void> {
    return correlateSignals(this.deps.correlator, signals);
  }
}

/** The schema of the rows the stream workers read back (signals feed the correlator, metrics the detectors); flows are held to the screen's row shape. */
const rowSchemas: Partial<Record<TelemetryTable, z.ZodType<object>>> = { signals: signalRowSchema, metrics: metricRowSchema };

/**
 * The message's rows, each of the message's org: JSON.parse keeps the last of
 * two `org_id` keys where ClickHouse keeps the first, so a row that names
 * another org anywhere is refused rather than correlated under it. Signals
 * and metrics are checked against their row schema besides.
 */
function parseLines({ msg, org }: Entry, table: TelemetryTable): object[] {
  const rows = rowsOf(msg);
  const text = Buffer.from(rows.buffer, rows.byteOffset, rows.byteLength).toString('utf8');
  const schema = rowSchemas[table];
  const out: object[] = [];
  try {
    for (const line of text.split('\n')) {
      if (!line) continue;
      const value = JSON.parse(line) as unknown;
      const row = (schema ? schema.parse(value) : value) as { org_id?: unknown } | null;
      if (row === null || typeof row !== 'object' || row.org_id !== org) throw new Error(`a row of another org than ${org}`);
      out.push(row);
    }
  } catch (err) {
    throw new UnreadableMessageError(msg.subject, { cause: err });
  }
  return out;
}

function countLines(data: Buffer): number {
  let n = 0;
  for (let i = data.indexOf(10); i !== -1; i = data.indexOf(10, i + 1)) n += 1;
  return n;
}
