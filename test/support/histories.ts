import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TestStack } from './test-stack';

/** Where recorded workflow histories live: test/integration/workflow-determinism.test.ts replays each. */
export const historiesDir = path.resolve(__dirname, '../fixtures/histories');

/**
 * RECORD_HISTORIES=1 saves a workflow's whole history, up to the event saying
 * how it ended (so a replay checks that too), as `<name>.json` under
 * test/fixtures/histories. Without it, nothing is recorded.
 */
export async function recordHistory(t: TestStack, name: string, workflowId: string): Promise<void> {
  if (!process.env.RECORD_HISTORIES) return;
  await t.stack.temporal.client.workflow.getHandle(workflowId).result().catch(() => undefined);
  // The CLI writes the standard proto3 JSON form that historyFromJSON reads back.
  const cli = t.stack.config.temporal.cli ?? path.join(t.stack.config.toolsDir, 'temporal');
  const json = execFileSync(cli, ['workflow', 'show', '--output', 'json', '--address', process.env.TEST_TEMPORAL_ADDRESS!, '--workflow-id', workflowId]);
  fs.mkdirSync(historiesDir, { recursive: true });
  fs.writeFileSync(path.join(historiesDir, `${name}.json`), json);
}
