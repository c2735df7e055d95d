import { isWrongLastSequence } from '../../streams/kv-bucket';

/** The answers a compare-and-set write of a bucket gets from JetStream, as nats.js throws them (an `api_error` beside the message). */
const answer = (err_code: number, description: string) => Object.assign(new Error(description), { api_error: { code: 400, err_code, description } });

describe('a compare-and-set write lost to another writer', () => {
  test('is recognized when the key moved on since it was read (10071)', () => {
    expect(isWrongLastSequence(answer(10071, 'wrong last sequence: 4'))).toBe(true);
  });

  test("is recognized when another write of the key is still being proposed on a cluster's stream (10164)", () => {
    // nats-server 2.12+ answers this while a write of the same subject is in flight on a replicated stream: two processes
    // taking the schema-migrations lock at one start got it, and the loser's start failed (cluster-kills.test.ts).
    expect(isWrongLastSequence(answer(10164, 'wrong last sequence'))).toBe(true);
  });

  test('is not any other refusal', () => {
    expect(isWrongLastSequence(answer(10077, 'maximum bytes exceeded'))).toBe(false);
    expect(isWrongLastSequence(new Error('timeout'))).toBe(false);
  });
});
