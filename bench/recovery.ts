import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { connect } from 'nats';
import { mintKey, postFlows, storedFlows, waitUntil } from './client';
import type { FlowBatches } from './data';
import type { BenchStack } from './stack';
import { names } from '../streams/names';

export interface RecoveryResult {
  /** Flows the backlog held when the new start began: its messages (acknowledged or not) × flows per message. */
  backlog_flows: number;
  /** Backlog flows ÷ the time from the new start's first health answer until every flow is stored. */
  drain_flows_per_s: number;
  restart_s: number;
  drain_s: number;
  /** Every flow stored once: the count after the drain (the scenario fails otherwise), against the flows acknowledged. */
  stored: number;
  acknowledged: number;
}

const clients = 4;

/** Messages the writers' consumer has yet to see or to acknowledge. */
async function backlogMessages(natsUrl: string, prefix: string): Promise<number> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await nc.jetstreamManager();
    const n = names(prefix);
    const info = await jsm.consumers.info(n.stream, n.writers);
    return info.num_pending + info.num_ack_pending;
  } finally {
    await nc.close();
  }
}

/**
 * Recovery (issue 19): a service on its own folder and database takes the
 * flows with Idempotency-Key at full speed and is killed -9 (every process)
 * the moment the last is acknowledged, so the stream workers die mid-batch
 * with the backlog they had not written. A new start on the same folder
 * then drains it; every backlog message is checked for stored rows first.
 * The drain is timed from the new process's launch (its stream workers
 * consume before it answers its first health check) until every flow is
 * stored, beside scenario 1's rate of the same run.
 */
export async function recoveryDrain(stack: BenchStack, data: FlowBatches, range: { from: number; to: number }): Promise<RecoveryResult> {
  const dataDir = path.join(stack.dir, 'recovery');
  const opts = { dataDir, database: `recovery_${randomBytes(4).toString('hex')}`, natsPrefix: `benchrec${randomBytes(4).toString('hex')}`, withoutCollector: true };
  const first = await stack.launch(opts);
  const { key } = await mintKey(first.url, stack.adminKey);
  // Keyed, as the operator's worst day in issue 19 was.
  await postFlows(first.url, key, data.bodies, clients, () => ({ 'idempotency-key': randomUUID() }));
  for (const { child } of first.processes) child.kill('SIGKILL');
  await Promise.all(first.processes.map(({ child }) => (child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', r)))));
  const backlog = (await backlogMessages(stack.natsUrl, opts.natsPrefix)) * (data.flows / data.bodies.length);

  const restarted = performance.now();
  const second = await stack.launch(opts);
  const up = performance.now();
  try {
    await waitUntil(async () => (await storedFlows(second.url, key, range.from, range.to)) >= data.flows, 600_000, 'the backlog drained', 20);
    const drained = performance.now();
    // Counted once the consumer is empty too: a doubled write would show as more flows than acknowledged.
    await waitUntil(async () => (await backlogMessages(stack.natsUrl, opts.natsPrefix)) === 0, 60_000, 'the writers consumer empty', 50);
    // The count is asked until answered: the polls above may have spent the key's query budget (429 reads as 0).
    let stored = 0;
    await waitUntil(async () => (stored = await storedFlows(second.url, key, range.from, range.to)) > 0, 60_000, 'the final count', 500);
    if (stored !== data.flows) throw new Error(`recovery stored ${stored} flows of ${data.flows} acknowledged: lost or doubled`);
    const drainSeconds = (drained - restarted) / 1000;
    return {
      backlog_flows: backlog,
      drain_flows_per_s: backlog / drainSeconds,
      restart_s: (up - restarted) / 1000,
      drain_s: drainSeconds,
      stored,
      acknowledged: data.flows,
    };
  } finally {
    await second.stop();
  }
}
