import { IncidentsRepo } from '../../storage/incidents-repo';
import { PoliciesRepo } from '../../storage/policies-repo';
import { ReplayHistory } from '../../storage/replay-history';
import { ReplaysRepo } from '../../storage/replays-repo';
import { createReplayActivities } from '../../workers/activities/replay-activities';
import { TemporalWorker } from '../../workers/temporal-worker';
import type { Config } from '../config';
import type { Adapters } from './adapters';
import type { EngineAddresses } from './engines';

/** The temporal-worker role: run the governance workflows and their activities. */
export function temporalWorkerRole(config: Config, addresses: EngineAddresses, a: Adapters) {
  const activities = createReplayActivities({
    incidents: new IncidentsRepo(a.clickhouse),
    policies: new PoliciesRepo(a.clickhouse),
    replays: new ReplaysRepo(a.clickhouse),
    history: new ReplayHistory(a.clickhouse),
  });
  const worker = new TemporalWorker(
    {
      address: addresses.temporalAddress,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      workflowBundlePath: config.temporal.workflowBundlePath,
    },
    { activities, log: a.log, registry: a.registry },
  );
  return { components: [worker], worker };
}
