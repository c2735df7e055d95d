import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import fs from 'node:fs';
import path from 'node:path';
import { historiesDir } from '../support/histories';

/**
 * Recorded histories of the replay workflow (approved, denied, expired,
 * ungated) and of the automation workflow (withdrawn after an approval and
 * an extension, denied, completed at the end of its duration), replayed
 * against the current workflow code: a change that breaks determinism fails
 * here. When a change is meant to alter what a running workflow does,
 * docs/internals/workflow-versioning.md says how to keep these replaying.
 * Re-record them with `RECORD_HISTORIES=1 npx jest
 * test/integration/governance.test.ts test/integration/automation.test.ts`.
 */
const dir = historiesDir;
const endings = [
  'automation-completed.json',
  'automation-denied.json',
  'automation-withdrawn.json',
  'replay-approved.json',
  'replay-denied.json',
  'replay-expired.json',
  'replay-ungated.json',
];
const filesIn = () => fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
const load = (file: string) => historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')));

describe('workflow determinism', () => {
  test('the histories cover every way a replay ends, and how an automation run is withdrawn, denied or completed', () => {
    expect(filesIn()).toEqual(endings);
  });

  test.each(filesIn())('%s replays against the current workflow code', async (file) => {
    await expect(Worker.runReplayHistory({ workflowsPath: require.resolve('../../workflows') }, load(file))).resolves.toBeUndefined();
  });

  test('a reordered workflow fails to replay the approved history', async () => {
    const broken = require.resolve('../fixtures/workflows/reordered-replay');
    await expect(Worker.runReplayHistory({ workflowsPath: broken }, load('replay-approved.json'))).rejects.toThrow(/[Nn]ondeterminism|[Dd]eterminism/);
  });
});
