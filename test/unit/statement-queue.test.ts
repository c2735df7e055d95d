import { StatementQueue, type StatementClass } from '../../storage/statement-queue';

/** A statement that settles when the test says so, recording when it started. */
function statements() {
  const started: string[] = [];
  const finish = new Map<string, () => void>();
  const statement = (name: string) => () =>
    new Promise<string>((resolve) => {
      started.push(name);
      finish.set(name, () => resolve(name));
    });
  const settle = async (name: string) => {
    finish.get(name)!();
    // Let the queue hand the turn on.
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { started, statement, settle };
}

describe('the statement queue of a one-at-a-time engine', () => {
  it('runs one statement at a time, in order within a class', async () => {
    const queue = new StatementQueue();
    const s = statements();
    const runs = ['a', 'b', 'c'].map((n) => queue.run('bulk', s.statement(n)));
    await s.settle('a');
    expect(s.started).toEqual(['a', 'b']);
    await s.settle('b');
    await s.settle('c');
    await expect(Promise.all(runs)).resolves.toEqual(['a', 'b', 'c']);
  });

  it('lets interactive statements go before bulk inserts waiting their turn, never before the running one', async () => {
    const queue = new StatementQueue();
    const s = statements();
    const order: Array<[string, StatementClass]> = [
      ['insert 1', 'bulk'],
      ['insert 2', 'bulk'],
      ['read', 'interactive'],
    ];
    const runs = order.map(([n, kind]) => queue.run(kind, s.statement(n)));
    expect(s.started).toEqual(['insert 1']);
    await s.settle('insert 1');
    expect(s.started).toEqual(['insert 1', 'read']);
    await s.settle('read');
    await s.settle('insert 2');
    await Promise.all(runs);
  });

  it('lets a waiting bulk insert go after as many interactive statements as it allows in a row', async () => {
    const queue = new StatementQueue({ maxInteractiveAhead: 2 });
    const s = statements();
    const runs = [queue.run('bulk', s.statement('insert 1')), queue.run('bulk', s.statement('insert 2'))];
    for (const n of ['read 1', 'read 2', 'read 3']) runs.push(queue.run('interactive', s.statement(n)));
    for (const n of ['insert 1', 'read 1', 'read 2', 'insert 2', 'read 3']) await s.settle(n);
    expect(s.started).toEqual(['insert 1', 'read 1', 'read 2', 'insert 2', 'read 3']);
    await Promise.all(runs);
  });

  it('hands the turn on when a statement fails', async () => {
    const queue = new StatementQueue();
    const failed = queue.run('interactive', () => Promise.reject(new Error('syntax error')));
    const next = queue.run('interactive', () => Promise.resolve('ran'));
    await expect(failed).rejects.toThrow('syntax error');
    await expect(next).resolves.toBe('ran');
  });

  it('tells its observer how long each statement waited for its turn and how long it ran', async () => {
    const seen: Array<{ kind: StatementClass; waitedMs: number; ranMs: number }> = [];
    const queue = new StatementQueue(undefined, (kind, waitedMs, ranMs) => seen.push({ kind, waitedMs, ranMs }));
    const slow = queue.run('bulk', () => new Promise((resolve) => setTimeout(resolve, 40)));
    const quick = queue.run('interactive', () => Promise.resolve());
    await Promise.all([slow, quick]);
    expect(seen.map((s) => s.kind)).toEqual(['bulk', 'interactive']);
    expect(seen[0]!.waitedMs).toBeLessThan(20);
    expect(seen[0]!.ranMs).toBeGreaterThanOrEqual(35);
    expect(seen[1]!.waitedMs).toBeGreaterThanOrEqual(35);
    expect(seen[1]!.ranMs).toBeLessThan(20);
  });
});
