import { PeriodicRound } from '../../core/periodic-round';

describe('a periodic round', () => {
  test('a round asked for while one runs is that same round, not a second beside it', async () => {
    let runs = 0;
    let finish!: () => void;
    const rounds = new PeriodicRound(60_000, () => {
      runs += 1;
      return new Promise<void>((resolve) => (finish = resolve));
    });
    const first = rounds.runNow();
    const second = rounds.runNow();
    expect(runs).toBe(1);
    finish();
    await Promise.all([first, second]);
    const third = rounds.runNow();
    expect(runs).toBe(2);
    finish();
    await third;
  });

  test('a fresh round asked for while one runs starts after it, one for every caller meanwhile', async () => {
    const started: number[] = [];
    const finishers: Array<() => void> = [];
    const rounds = new PeriodicRound(60_000, () => {
      started.push(started.length + 1);
      return new Promise<void>((resolve) => finishers.push(resolve));
    });
    const running = rounds.runNow();
    const fresh = [rounds.runFresh(), rounds.runFresh()];
    expect(started).toEqual([1]);
    finishers[0]!();
    await running;
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([1, 2]);
    finishers[1]!();
    await Promise.all(fresh);
    expect(started).toEqual([1, 2]);
  });

  test('stop waits for the round in flight', async () => {
    let done = false;
    const rounds = new PeriodicRound(60_000, () => new Promise<void>((resolve) => setTimeout(() => ((done = true), resolve()), 50)));
    rounds.start({ now: true });
    await rounds.stop();
    expect(done).toBe(true);
  });
});
