import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { storedReplayInput } from '../../application/replay-service';
import { PeriodicRound } from '../../core/periodic-round';
import type { Logger } from '../../observability/logger';
import { counter, engineErrorsCounter, type Registry } from '../../observability/metrics';
import type { ReplayRecord } from '../../storage/replays-repo';
import type { ReplayInput } from '../../workflows/replay-contract';

export interface ReplayReconcilerConfig {
  /** How often the queued replays are looked at. */
  intervalMs: number;
  /** A replay queued for less than this may still be starting in the process that stored it: left alone. */
  graceMs: number;
  /** A replay whose workflow could not be started for this long since the first attempt is failed. */
  failAfterMs: number;
  /** Most replays handled in one round. */
  batchSize: number;
}

/** Picked up 15 to 25 s after it was stored, started or failed within a minute. */
export const defaultReplayReconcilerConfig: ReplayReconcilerConfig = { intervalMs: 10_000, graceMs: 15_000, failAfterMs: 30_000, batchSize: 100 };

export type ReconcileOutcome = 'started' | 'already_started' | 'start_failed' | 'failed' | 'unrecorded';

export interface ReplayReconcilerDeps {
  replays: { queuedBefore(beforeMs: number, limit: number): Promise<ReplayRecord[]>; put(record: ReplayRecord): Promise<void> };
  /** Starts the replay's workflow; a second start of one replay throws WorkflowExecutionAlreadyStartedError. */
  start(input: ReplayInput): Promise<void>;
  /** Whether the ledger holds an entry of this action on this target (AuditLedger.recorded). */
  audit: { recorded(orgId: string, action: string, target: string): Promise<boolean> };
  /** Runs the work only in the one process that leads (a lock across processes); undefined elsewhere. */
  lead<T>(work: () => Promise<T>): Promise<T | undefined>;
  registry: Registry;
  log: Logger;
  now?: () => number;
}

/**
 * No replay is stranded: the API stores a replay `queued`, audits the
 * request, starts its workflow and only then answers 202; a process that
 * dies in between leaves a replay no workflow will ever move. This loop, led
 * by one process at a time, looks at each replay queued longer than the
 * grace period. One whose request the ledger holds was decided and recorded:
 * its workflow is started (the replay's business key makes a second start
 * impossible: one the API did start is only found running), or, if it cannot
 * start for `failAfterMs`, the replay is failed with the reason. One whose
 * request the ledger lacks was never recorded (the ledger refused it and the
 * API answered 503, or the process died first): it is failed, and nothing
 * runs.
 */
export class ReplayReconciler {
  private readonly rounds: PeriodicRound;
  /** When this process first failed to start each replay's workflow. */
  private readonly firstFailure = new Map<string, number>();
  private readonly outcomes;
  private readonly engineErrors;

  constructor(
    private readonly config: ReplayReconcilerConfig,
    private readonly deps: ReplayReconcilerDeps,
  ) {
    this.outcomes = counter(deps.registry, {
      name: 'nettel_replays_reconciled_total',
      help: 'Queued replays whose workflow had not started, by what the reconciler did',
      labelNames: ['outcome'] as const,
    });
    this.engineErrors = engineErrorsCounter(deps.registry);
    this.rounds = new PeriodicRound(config.intervalMs, () => this.runOnce());
  }

  start(): Promise<void> {
    this.rounds.start();
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return this.rounds.stop();
  }

  /** One round, in the leading process only; returns what it did to each replay it found. */
  async runOnce(): Promise<Map<string, ReconcileOutcome>> {
    try {
      return (await this.deps.lead(() => this.reconcile())) ?? new Map();
    } catch (err) {
      this.engineErrors.inc({ engine: 'clickhouse', operation: 'replay_reconcile' });
      this.deps.log.error({ err }, 'replay reconciliation failed; it runs again at the next interval');
      return new Map();
    }
  }

  private async reconcile(): Promise<Map<string, ReconcileOutcome>> {
    const now = (this.deps.now ?? Date.now)();
    const stranded = await this.deps.replays.queuedBefore(now - this.config.graceMs, this.config.batchSize);
    const done = new Map<string, ReconcileOutcome>();
    for (const record of stranded) {
      const outcome = await this.reconcileOne(record, now);
      this.outcomes.inc({ outcome });
      done.set(record.replay_id, outcome);
    }
    // Replays no longer queued need no memory of their failures.
    for (const id of this.firstFailure.keys()) if (!done.has(id)) this.firstFailure.delete(id);
    return done;
  }

  private async reconcileOne(record: ReplayRecord, now: number): Promise<ReconcileOutcome> {
    const id = record.replay_id;
    if (!(await this.deps.audit.recorded(record.org_id, 'replay.request', id))) {
      await this.fail(record, now, 'its request was never recorded in the audit ledger (the request was answered with an error, or its process died first); nothing ran');
      this.deps.log.warn({ org_id: record.org_id, replay_id: id }, 'failed a replay stranded in queued whose request was never recorded');
      return 'unrecorded';
    }
    try {
      await this.deps.start(storedReplayInput(record));
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) return this.startFailed(record, err, now);
      this.firstFailure.delete(id);
      return 'already_started';
    }
    this.firstFailure.delete(id);
    this.deps.log.warn({ org_id: record.org_id, replay_id: id, requested_at: record.requested_at }, 'started the workflow of a replay stranded in queued');
    return 'started';
  }

  private fail(record: ReplayRecord, now: number, message: string): Promise<void> {
    return this.deps.replays.put({ ...record, status: 'failed', updated_at: now, error: { code: 'UNAVAILABLE', message }, version: 2 });
  }

  private async startFailed(record: ReplayRecord, err: unknown, now: number): Promise<ReconcileOutcome> {
    this.engineErrors.inc({ engine: 'temporal', operation: 'replay_reconcile' });
    const first = this.firstFailure.get(record.replay_id) ?? now;
    this.firstFailure.set(record.replay_id, first);
    if (now - first < this.config.failAfterMs) {
      this.deps.log.warn({ err, replay_id: record.replay_id }, 'unable to start the workflow of a stranded replay; trying again');
      return 'start_failed';
    }
    await this.fail(record, now, `the workflow could not start: ${String((err as Error | undefined)?.message ?? err).slice(0, 200)}`);
    this.firstFailure.delete(record.replay_id);
    this.deps.log.error({ err, replay_id: record.replay_id }, 'failed a stranded replay whose workflow could not start');
    return 'failed';
  }
}
