import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { Registry } from 'prom-client';
import { createLogger } from '../../observability/logger';
import type { ReplayRecord } from '../../storage/replays-repo';
import type { ReplayInput } from '../../workflows/replay-contract';
import { ReplayReconciler, type ReplayReconcilerConfig } from '../../workers/governance/replay-reconciler';

/**
 * The replay reconciler's decisions on plain objects: which queued replays it
 * starts (those whose request the ledger holds), which it fails (the others),
 * what it leaves to a workflow that exists, and when it gives up on one whose
 * workflow cannot start. No engine is involved.
 */
const config: ReplayReconcilerConfig = { intervalMs: 1_000, graceMs: 15_000, failAfterMs: 30_000, batchSize: 10 };

function queued(id: string, requestedAt: number): ReplayRecord {
  return {
    org_id: 'org_a', replay_id: id, incident_id: 'inc_1', status: 'queued', requested_by: 'key_req', requested_by_person: null, requested_at: requestedAt, updated_at: requestedAt,
    window_minutes: 12, approvals: [], report: null, error: null, decision_deadline: null, approval_policies: [], version: 1,
  };
}

function reconcilerWith(opts: { records: ReplayRecord[]; start?: (input: ReplayInput) => Promise<void>; leads?: boolean; ledger?: string[] }) {
  // By default every stranded replay's request was recorded, as the API records it before starting the workflow.
  const ledger = opts.ledger ?? opts.records.map((r) => `replay.request ${r.replay_id}`);
  let now = 100_000;
  const asked: number[] = [];
  const stored: ReplayRecord[] = [];
  const started: ReplayInput[] = [];
  const registry = new Registry();
  const reconciler = new ReplayReconciler(config, {
    replays: {
      queuedBefore: (before) => Promise.resolve(void asked.push(before)).then(() => opts.records.filter((r) => r.requested_at < before)),
      put: (r) => Promise.resolve(void stored.push(r)),
    },
    start: opts.start ?? ((input) => Promise.resolve(void started.push(input))),
    audit: { recorded: (_org, action, target) => Promise.resolve(ledger.includes(`${action} ${target}`)) },
    lead: (work) => (opts.leads === false ? Promise.resolve(undefined) : work()),
    registry,
    log: createLogger('silent'),
    now: () => now,
  });
  return { reconciler, asked, stored, started, registry, advance: (ms: number) => (now += ms) };
}

describe('replay reconciler', () => {
  test('a replay queued longer than the grace period, whose request the ledger holds, has its workflow started with its stored input', async () => {
    const { reconciler, started } = reconcilerWith({ records: [queued('rep_1', 50_000)] });
    expect([...(await reconciler.runOnce())]).toEqual([['rep_1', 'started']]);
    expect(started).toEqual([{ orgId: 'org_a', replayId: 'rep_1', incidentId: 'inc_1', requestedBy: 'key_req', requestedByPerson: null, requestedAt: 50_000, windowMinutes: 12 }]);
  });

  test('a stranded replay whose request the ledger lacks is failed with the reason, and no workflow starts', async () => {
    const { reconciler, started, stored } = reconcilerWith({ records: [queued('rep_1', 50_000)], ledger: [] });
    expect([...(await reconciler.runOnce())]).toEqual([['rep_1', 'unrecorded']]);
    expect(started).toEqual([]);
    expect(stored).toEqual([{ ...queued('rep_1', 50_000), status: 'failed', updated_at: 100_000, version: 2, error: { code: 'UNAVAILABLE', message: expect.stringContaining('never recorded') as unknown } }]);
  });

  test('only replays queued before the grace period are looked at: a younger one may still be starting', async () => {
    const { reconciler, asked } = reconcilerWith({ records: [] });
    await reconciler.runOnce();
    expect(asked).toEqual([100_000 - config.graceMs]);
  });

  test('a replay whose workflow was started already is left to it', async () => {
    const exists = () => Promise.reject(new WorkflowExecutionAlreadyStartedError('already started', 'replay:org_a:rep_1', 'replayWorkflow'));
    const { reconciler, stored } = reconcilerWith({ records: [queued('rep_1', 50_000)], start: exists });
    expect([...(await reconciler.runOnce())]).toEqual([['rep_1', 'already_started']]);
    expect(stored).toEqual([]);
  });

  test('a workflow that cannot start is tried again at the next round', async () => {
    const { reconciler, stored, advance } = reconcilerWith({ records: [queued('rep_1', 50_000)], start: () => Promise.reject(new Error('temporal unavailable')) });
    expect([...(await reconciler.runOnce())]).toEqual([['rep_1', 'start_failed']]);
    advance(config.failAfterMs - 1);
    expect([...(await reconciler.runOnce())]).toEqual([['rep_1', 'start_failed']]);
    expect(stored).toEqual([]);
  });

  test('a replay whose workflow could not start for failAfterMs is failed with the reason', async () => {
    const { reconciler, stored, advance } = reconcilerWith({ records: [queued('rep_1', 50_000)], start: () => Promise.reject(new Error('temporal unavailable')) });
    await reconciler.runOnce();
    advance(config.failAfterMs);
    expect([...(await reconciler.runOnce())]).toEqual([['rep_1', 'failed']]);
    expect(stored).toEqual([
      { ...queued('rep_1', 50_000), status: 'failed', updated_at: 100_000 + config.failAfterMs, version: 2, error: { code: 'UNAVAILABLE', message: 'the workflow could not start: temporal unavailable' } },
    ]);
  });

  test('a process that does not lead reconciles nothing', async () => {
    const { reconciler, asked, started } = reconcilerWith({ records: [queued('rep_1', 50_000)], leads: false });
    expect((await reconciler.runOnce()).size).toBe(0);
    expect(asked).toEqual([]);
    expect(started).toEqual([]);
  });

  test('each replay handled is counted by outcome', async () => {
    const { reconciler, registry } = reconcilerWith({ records: [queued('rep_1', 50_000), queued('rep_2', 60_000)] });
    await reconciler.runOnce();
    const values = (await registry.getSingleMetric('nettel_replays_reconciled_total')!.get()).values;
    expect(values.map((v) => ({ labels: v.labels, value: v.value }))).toEqual([{ labels: { outcome: 'started' }, value: 2 }]);
  });
});
