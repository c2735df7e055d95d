import type { KeyChange } from '../../application/correlator';
import type { DestinationMinute } from '../../core/detectors';
import type { RollupRepairOutcome } from '../../storage/rollup-repair';
import type { StoredIds, StoredPrefix, TelemetryTable } from '../../storage/telemetry-store';
import type { OpenedConsumer } from '../consume/consumer';

/**
 * What the stream worker needs of the things around it, as small interfaces:
 * the NATS and ClickHouse implementations satisfy them, and unit tests pass
 * plain objects.
 */

/** One pulled message: the part of a JetStream `JsMsg` the worker uses. */
export interface WorkMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers?: Iterable<[string, string[]]> & { get(key: string): string };
  readonly info: {
    readonly redelivered: boolean;
    readonly redeliveryCount: number;
    readonly streamSequence: number;
    readonly timestampNanos: number;
  };
  ack(): void;
  nak(delayMs?: number): void;
  term(reason?: string): void;
  working(): void;
}

/** The reads and writes of raw telemetry (TelemetryStore). */
export interface TelemetryWrites {
  insert(table: TelemetryTable, ndjson: Buffer | string): Promise<void>;
  existingEventIds(table: TelemetryTable, orgId: string, minTs: number, maxTs: number, ids: string[]): Promise<StoredIds>;
  storedPrefixes(table: TelemetryTable, orgId: string, ranges: ReadonlyArray<readonly [number, number]>, prefixes: string[]): Promise<Map<string, StoredPrefix>>;
  /** Gives the flow rollups what they lack of these writes, whose flows are stored (a write cut between its parts). */
  completeRollups(writeIds: readonly string[]): Promise<RollupRepairOutcome[]>;
  destinationMinutesOver(orgId: string, fromTs: number, toTs: number, bytes: number): Promise<DestinationMinute[]>;
  exporterDestinationMinutesOver(orgId: string, fromTs: number, toTs: number, thresholds: Readonly<Record<string, number>>): Promise<DestinationMinute[]>;
}

/** Incident recomputation for the correlation keys a batch touched (Correlator). */
export interface IncidentCorrelation {
  recompute(orgId: string, changes: KeyChange[]): Promise<unknown>;
}

/** Where a message goes that ClickHouse keeps refusing. */
export interface DeadLetterSink {
  deadLetter(message: WorkMessage, err: unknown): Promise<void>;
}

/** Opens the shared consumer; a worker calls it again after each failure. */
export interface MessageSource {
  open(): Promise<OpenedConsumer<WorkMessage>>;
  /**
   * Whether an earlier pull may have handed this message out already, in a
   * way its delivery count does not show (a consumer recreated, or a server
   * that lost its delivery state in a restart): its rows are checked first.
   */
  mayHaveBeenDelivered(message: WorkMessage): boolean;
}
