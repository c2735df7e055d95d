import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { Registry } from 'prom-client';
import { createLogger } from '../../observability/logger';
import type { ReplayRecord } from '../../storage/replays-repo';
import type { ReplayInput } from '../../workflows/replay-contract';
import { ReplayReconciler, type ReplayReconcilerConfig } from '../../workers/replay-reconciler';

/**
 * The replay reconciler's decisions on plain objects: which queued replays it
 * starts, what it audits, what it leaves to a workflow that exists, and when
 * it gives up on one whose workflow cannot start. No engine is involved.
 */
const config: ReplayReconcilerConfig = { intervalMs: 1_000, graceMs: 15_000, failAfterMs: 30_000, batchSize: 10 };

function queued(id: string, requestedAt: number): ReplayRecord {
  return {
    org_id: 'org_a', replay_id: id, incident_id: 'inc_1', status: 'queued', requested_by: 'key_req', requested_at: requestedAt, updated_at: requestedAt,
    window_minutes: 12, approvals: [], report: null, error: null, decision_deadline: null, approval_policies: [], version: 1,
  };
}

function reconcilerWith(opts: { records: ReplayRecord[]; start?: (input: ReplayInput) => Promise<void>; leads?: boolean; ledger?: string[] }) {
  let now = 100_000;
  const asked: number[] = [];
  const stored: ReplayRecord[] = [];
  const started: ReplayInput[] = [];
  const audited: Array<{ action: string; actor: string; target: string; details?: Record<string, unknown> }> = [];
  const registry = new Registry();
  const reconciler = new ReplayReconciler(config, {
    replays: {
      queuedBefore: (before) => Promise.resolve(void asked.push(before)).then(() => opts.records.filter((r) => r.requested_at < before)),
      put: (r) => Promise.resolve(void stored.push(r)),
    },
    start: opts.start ?? ((input) => Promise.resolve(void started.push(input))),
    audit: {
      append: (e) => Promise.resolve(void audited.push(e)),
      recorded: (_org, action, target) => Promise.resolve([...(opts.ledger ?? []), ...audited.map((e) => `${e.action} ${e.target}`)].includes(`${action} ${target}`)),
    },
    lead: (work) => (opts.leads === false ? Promise.resolve(undefined) : work()),
    registry,
    log: createLogger('silent'),
    now: () => now,
  });
  return { reconciler, asked, stored, started, audited, registry, advance: (ms: number) => (now += ms) };
}

describe('replay reconciler', () => {
  test('a replay queued longer than the grace period has its workflow started with its stored input', async () => {
    const { reconciler, started } = reconcilerWith({ records: [queued('rep_1', 50_000)] });
    expect([...(await reconciler.runOnce())]).toEqual([['rep_1', 'started']]);
    expect(started).toEqual([{ orgId: 'org_a', replayId: 'rep_1', incidentId: 'inc_1', requestedBy: 'key_req', requestedAt: 50_000, windowMinutes: 12 }]);
  });

  test('the request of a replay it started is audited for its requester, as the API would have', async () => {
    const { reconciler, audited } = reconcilerWith({ records: [queued('rep_1', 50_000)] });
    await reconciler.runOnce();
    expect(audited).toEqual([{ orgId: 'org_a', actor: 'key_req', action: 'replay.request', target: 'rep_1', details: { incident_id: 'inc_1', started_by: 'reconciler' } }]);
  });

  test('only replays queued before the grace period are looked at: a younger one may still be starting', async () => {
    const { reconciler, asked } = reconcilerWith({ records: [] });
    await reconciler.runOnce();
    expect(asked).toEqual([100_000 - config.graceMs]);
  });

  const exists = () => Promise.reject(new WorkflowExecutionAlreadyStartedError('already started', 'replay:org_a:rep_1', 'replayWorkflow'));

  test('a replay whose workflow was started and whose request the ledger holds is left to it, and not audited again', async () => {
    const { reconciler, audited, stored } = reconcilerWith({ records: [queued('rep_1', 50_000)], start: exists, ledger: ['replay.request rep_1'] });
    expect([...(await reconciler.runOnce())]).toEqual([['rep_1', 'already_started']]);
    expect(audited).toEqual([]);
    expect(stored).toEqual([]);
  });

  test('a replay whose workflow the API started but whose request it never audited (it died in between) has its request audited once', async () => {
    const { reconciler, audited } = reconcilerWith({ records: [queued('rep_1', 50_000)], start: exists });
    await reconciler.runOnce();
    await reconciler.runOnce();
    expect(audited).toEqual([{ orgId: 'org_a', actor: 'key_req', action: 'replay.request', target: 'rep_1', details: { incident_id: 'inc_1', started_by: 'api' } }]);
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
