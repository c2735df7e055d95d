import { DefaultLogger, NativeConnection, Runtime, Worker, type LogEntry } from '@temporalio/worker';
import fs from 'node:fs';
import type { Logger } from '../../observability/logger';
import { engineErrorsCounter, type Registry } from '../../observability/metrics';
import { temporalConnectionOptions, type TemporalAccess } from '../../temporal/temporal-client';
import type { AutomationActivities } from '../../workflows/automation-contract';
import type { ReplayActivities } from '../../workflows/replay-contract';

export interface TemporalWorkerConfig extends TemporalAccess {
  namespace: string;
  taskQueue: string;
  /** A prebuilt workflow bundle (built by the set-up); without it the worker bundles workflows/ at start. */
  workflowBundlePath?: string;
}

let runtimeInstalled = false;

/**
 * Routes the SDK's own logs (worker life cycle, workflow failures) to the
 * service's logger instead of the console. The runtime is per process and
 * must be installed before the first native connection.
 */
function installRuntime(log: Logger): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const forward = (entry: LogEntry) => {
    const level = entry.level === 'ERROR' ? 'error' : entry.level === 'WARN' ? 'warn' : 'debug';
    log[level]({ sdk: 'temporal', ...entry.meta }, entry.message);
  };
  Runtime.install({ logger: new DefaultLogger('WARN', forward) });
}

/** Polls the governance task queue: runs the workflows in workflows/ and the activities given to it. */
export class TemporalWorker {
  private connection?: NativeConnection;
  private worker?: Worker;
  private running?: Promise<void>;

  constructor(
    private readonly config: TemporalWorkerConfig,
    private readonly deps: { activities: ReplayActivities & AutomationActivities; log: Logger; registry: Registry },
  ) {}

  async start(): Promise<void> {
    installRuntime(this.deps.log);
    this.connection = await NativeConnection.connect(temporalConnectionOptions(this.config));
    const bundle = this.config.workflowBundlePath;
    const workflows =
      bundle && fs.existsSync(bundle)
        ? { workflowBundle: { codePath: bundle } }
        : { workflowsPath: require.resolve('../../workflows') };
    this.worker = await Worker.create({
      connection: this.connection,
      namespace: this.config.namespace,
      taskQueue: this.config.taskQueue,
      activities: this.deps.activities,
      // A stop lets running activities finish, so a replaced worker leaves no activity to time out.
      shutdownGraceTime: '20s',
      ...workflows,
    });
    this.running = this.worker.run().catch((err) => {
      engineErrorsCounter(this.deps.registry).inc({ engine: 'temporal', operation: 'worker' });
      this.deps.log.error({ err }, 'temporal worker stopped with an error');
    });
    this.deps.log.info({ taskQueue: this.config.taskQueue, prebuilt: 'workflowBundle' in workflows }, 'temporal worker polling');
  }

  /** For /healthz: up while the worker polls its task queue. */
  probe(): Promise<{ detail: string }> {
    const state = this.worker?.getState() ?? 'STOPPED';
    if (state !== 'RUNNING') return Promise.reject(new Error(`temporal worker is ${state.toLowerCase()}`));
    return Promise.resolve({ detail: `polling ${this.config.taskQueue}` });
  }

  async stop(): Promise<void> {
    if (this.worker && this.worker.getState() === 'RUNNING') this.worker.shutdown();
    await this.running;
    await this.connection?.close();
    this.worker = undefined;
    this.connection = undefined;
  }
}
