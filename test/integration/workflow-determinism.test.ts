import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Recorded histories of the replay workflow (approved, denied, expired,
 * ungated), replayed against the current workflow code: a change that
 * breaks determinism fails here. Two sets: v1/ holds the previous release's
 * histories (7158c7a, before the approval gate; runs it started replay along
 * the workflow's legacy path, so they go when that path does), the top folder
 * the current code's. Re-record the current ones with
 * `RECORD_HISTORIES=1 npx jest test/integration/governance.test.ts`.
 */
const root = path.resolve(__dirname, '../fixtures/histories');
const sets = { v1: path.join(root, 'v1'), current: root };
const endings = ['replay-approved.json', 'replay-denied.json', 'replay-expired.json', 'replay-ungated.json'];
const filesIn = (dir: string) => fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
const cases = Object.entries(sets).flatMap(([set, dir]) => filesIn(dir).map((file) => ({ set, dir, file })));
const load = (dir: string, file: string) => historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')));

describe('workflow determinism', () => {
  test.each(Object.entries(sets))('the %s histories cover every way a replay ends', (_set, dir) => {
    expect(filesIn(dir)).toEqual(endings);
  });

  test.each(cases)('$set $file replays against the current workflow code', async ({ dir, file }) => {
    await expect(Worker.runReplayHistory({ workflowsPath: require.resolve('../../workflows') }, load(dir, file))).resolves.toBeUndefined();
  });

  test.each(Object.entries(sets))('a reordered workflow fails to replay the %s approved history', async (_set, dir) => {
    const broken = require.resolve('../fixtures/workflows/reordered-replay');
    await expect(Worker.runReplayHistory({ workflowsPath: broken }, load(dir, 'replay-approved.json'))).rejects.toThrow(/[Nn]ondeterminism|[Dd]eterminism/);
  });
});
