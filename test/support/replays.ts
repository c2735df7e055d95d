import type { ReplayView } from './api-types';
import type { TestStack } from './test-stack';
import { waitFor } from './wait';

/** Polls a replay until it reaches `status`, and answers it as the API shows it then. */
export function replayInStatus(t: TestStack, key: string, id: string, status: string, timeoutMs = 30_000): Promise<ReplayView> {
  return waitFor(async () => {
    const r = await t.request<ReplayView>('GET', `/v1/replays/${id}`, { key });
    return r.body.status === status ? r.body : undefined;
  }, timeoutMs, `replay ${status}`);
}
