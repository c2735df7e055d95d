import { EngineSupervisor, type SupervisedProcess } from '../../engines/supervisor';
import { createLogger } from '../../observability/logger';
import { createRegistry } from '../../observability/metrics';
import { metricTotal } from '../support/metrics';
import { waitFor } from '../support/wait';

/** An engine process as the supervisor sees it: alive or not, and how its starts go. */
class FakeEngine implements SupervisedProcess {
  readonly name = 'fake-engine';
  alive = false;
  starts = 0;
  kills = 0;
  /** Starts that fail before one succeeds. */
  failingStarts = 0;

  get owned() {
    return true;
  }
  get running() {
    return this.alive;
  }
  start(): Promise<void> {
    this.starts += 1;
    if (this.failingStarts > 0) {
      this.failingStarts -= 1;
      return Promise.reject(new Error('did not come up'));
    }
    this.alive = true;
    return Promise.resolve();
  }
  stop(): Promise<void> {
    this.alive = false;
    return Promise.resolve();
  }
  kill(): void {
    this.kills += 1;
    this.alive = false;
  }
}

const fast = { checkIntervalMs: 10, backoffMs: 20, maxBackoffMs: 40, livenessFailAfterMs: 100 };

function supervised(engine: FakeEngine) {
  const registry = createRegistry();
  const supervisor = new EngineSupervisor(engine, fast, { log: createLogger('silent'), registry });
  return { supervisor, registry };
}

describe('engine supervisor', () => {
  test('an engine found dead is started again, and the death and the restart are counted', async () => {
    const engine = new FakeEngine();
    const { supervisor, registry } = supervised(engine);
    await supervisor.start();
    engine.alive = false;
    await waitFor(() => Promise.resolve(engine.starts === 2 && engine.alive ? true : undefined), 2_000, 'the restart');
    expect(await metricTotal(registry, 'nettel_engine_deaths_total')).toBe(1);
    expect(await metricTotal(registry, 'nettel_engine_restarts_total')).toBe(1);
    await supervisor.stop();
  });

  test('a restart that fails is tried again after a backoff until the engine comes up, each failure counted', async () => {
    const engine = new FakeEngine();
    const { supervisor, registry } = supervised(engine);
    await supervisor.start();
    engine.failingStarts = 3;
    engine.alive = false;
    await waitFor(() => Promise.resolve(engine.alive ? true : undefined), 2_000, 'the engine back');
    expect(engine.starts).toBe(5);
    expect(await metricTotal(registry, 'nettel_engine_restart_failures_total')).toBe(3);
    await supervisor.stop();
  });

  /**
   * Kills the engine each time it is back, `deaths` times, each run lasting
   * `runMs` on the supervisor's clock (moved by the test, not waited out);
   * the real times of its starts, between which the back-off waits.
   */
  async function crashLoop(config: typeof fast & { healthyRunMs: number }, deaths: number, runMs: number): Promise<number[]> {
    const engine = new FakeEngine();
    const startTimes: number[] = [];
    const start = engine.start.bind(engine);
    engine.start = () => (startTimes.push(Date.now()), start());
    let clock = 0;
    const supervisor = new EngineSupervisor(engine, config, { log: createLogger('silent'), registry: createRegistry(), now: () => clock });
    await supervisor.start();
    for (let death = 1; death <= deaths; death++) {
      clock += runMs;
      engine.alive = false;
      await waitFor(() => Promise.resolve(engine.alive ? true : undefined), 5_000, `restart ${death}`);
    }
    await supervisor.stop();
    return startTimes.slice(1).map((t, i) => t - startTimes[i]!);
  }

  test('an engine that keeps dying soon after its start waits a doubling backoff before each restart after the first', async () => {
    const gaps = await crashLoop({ ...fast, backoffMs: 150, maxBackoffMs: 1_000, healthyRunMs: 10_000 }, 3, 0);
    expect(gaps[1]).toBeGreaterThanOrEqual(150);
    expect(gaps[2]).toBeGreaterThanOrEqual(300);
  });

  test('an engine whose run counted as healthy is restarted at once each time it dies', async () => {
    const gaps = await crashLoop({ ...fast, backoffMs: 5_000, maxBackoffMs: 5_000, healthyRunMs: 20 }, 3, 50);
    for (const gap of gaps) expect(gap).toBeLessThan(5_000);
  });

  test('the probe fails while the engine is being restarted', async () => {
    const engine = new FakeEngine();
    const { supervisor } = supervised(engine);
    await supervisor.start();
    await expect(supervisor.probe()).resolves.toEqual({ detail: 'supervised, 0 restart(s)' });
    engine.failingStarts = 1_000;
    engine.alive = false;
    await waitFor(async () => ((await supervisor.probe().then(() => false, () => true)) ? true : undefined), 2_000, 'a failing probe');
    await supervisor.stop();
  });

  test('an engine that runs but fails its liveness check for livenessFailAfterMs is killed and restarted, and the check told so', async () => {
    const engine = new FakeEngine();
    const { supervisor, registry } = supervised(engine);
    let restarted = 0;
    supervisor.watchLiveness({ check: () => Promise.reject(new Error('stores nothing')), intervalMs: 10, afterRestart: () => (restarted += 1) });
    await supervisor.start();
    await waitFor(() => Promise.resolve(restarted >= 1 ? true : undefined), 2_000, 'a restart for liveness');
    expect(engine.kills).toBeGreaterThanOrEqual(1);
    expect(await metricTotal(registry, 'nettel_engine_unresponsive_total')).toBeGreaterThanOrEqual(1);
    await supervisor.stop();
  });

  test('a liveness check that cannot tell (its client not connected) never gets the engine killed', async () => {
    const engine = new FakeEngine();
    const { supervisor } = supervised(engine);
    let checks = 0;
    const cannotTell = () => {
      checks += 1;
      return Promise.resolve('unknown' as const);
    };
    supervisor.watchLiveness({ check: cannotTell, intervalMs: 10 });
    await supervisor.start();
    await waitFor(() => Promise.resolve(checks >= 30 ? true : undefined), 2_000, 'thirty checks, three times livenessFailAfterMs');
    expect(engine.kills).toBe(0);
    await supervisor.stop();
  });
});
