import { NativeConnection, Worker } from '@temporalio/worker';
import fs from 'node:fs';
import type { Logger } from '../service/logger';
import type { ReplayActivities } from './activities/replay-activities';

export interface TemporalWorkerConfig {
  address: string;
  namespace: string;
  taskQueue: string;
  /** A prebuilt workflow bundle (built by the set-up); without it the worker bundles workflows/ at start. */
  workflowBundlePath?: string;
}

/** Polls the governance task queue: runs the workflows in workflows/ and the activities given to it. */
export class TemporalWorker {
  private connection?: NativeConnection;
  private worker?: Worker;
  private running?: Promise<void>;

  constructor(
    private readonly config: TemporalWorkerConfig,
    private readonly deps: { activities: ReplayActivities; log: Logger },
  ) {}

  async start(): Promise<void> {
    this.connection = await NativeConnection.connect({ address: this.config.address });
    const bundle = this.config.workflowBundlePath;
    const workflows =
      bundle && fs.existsSync(bundle)
        ? { workflowBundle: { codePath: bundle } }
        : { workflowsPath: require.resolve('../workflows') };
    this.worker = await Worker.create({
      connection: this.connection,
      namespace: this.config.namespace,
      taskQueue: this.config.taskQueue,
      activities: this.deps.activities,
      ...workflows,
    });
    this.running = this.worker.run().catch((err) => {
      this.deps.log.error({ err }, 'temporal worker stopped with an error');
    });
    this.deps.log.info({ taskQueue: this.config.taskQueue, prebuilt: 'workflowBundle' in workflows }, 'temporal worker polling');
  }

  async stop(): Promise<void> {
    if (this.worker && this.worker.getState() === 'RUNNING') this.worker.shutdown();
    await this.running;
    await this.connection?.close();
    this.worker = undefined;
    this.connection = undefined;
  }
}
