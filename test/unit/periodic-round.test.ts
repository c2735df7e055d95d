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

  test('stop waits for the round in flight', async () => {
    let done = false;
    const rounds = new PeriodicRound(60_000, () => new Promise<void>((resolve) => setTimeout(() => ((done = true), resolve()), 50)));
    rounds.start({ now: true });
    await rounds.stop();
    expect(done).toBe(true);
  });
});
