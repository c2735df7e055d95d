import { columnsAdded, type Migration } from './migration';

/**
 * Replays carry the approval gate their workflow opened
 * (api/routes/replays.ts: decision_deadline, approval_policies): when it
 * closes (epoch ms; 0 before it opened) and the policies that asked for it
 * (JSON).
 */
const columns = ['decision_deadline Int64 DEFAULT 0', "approval_policies String DEFAULT '[]'"];

export const replayGateMigrations: Migration[] = [{ id: '0016_replay_approval_gate', ...columnsAdded('replays', columns) }];
