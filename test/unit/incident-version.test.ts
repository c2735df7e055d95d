import { computedVersion, maxSignals, revivedVersion, tombstoneVersion } from '../../core/incident-version';
import { seededRandom } from '../support/malformed';

/**
 * The ranking invariant of incident versions, over random computations: the
 * highest version must be the computation that knows most transitions, then
 * most signals; a tombstone must bury every stale computation of its id and
 * yield to any that knows of a newer transition.
 */
const rand = seededRandom(20261121);
const signals = () => 1 + Math.floor(rand() * maxSignals);
const transitions = () => Math.floor(rand() * 50);
const runs = 5_000;

describe('incident version ranking', () => {
  test('a computation that knows of more transitions outranks one that knows of fewer, whatever their signals', () => {
    for (let i = 0; i < runs; i += 1) {
      const fewer = transitions();
      expect(computedVersion(signals(), fewer + 1 + Math.floor(rand() * 3))).toBeGreaterThan(computedVersion(signals(), fewer));
    }
  });

  test('among computations with the same transitions, the one with more signals wins', () => {
    for (let i = 0; i < runs; i += 1) {
      const t = transitions();
      const a = signals();
      const b = signals();
      expect(Math.sign(computedVersion(a, t) - computedVersion(b, t))).toBe(Math.sign(a - b));
    }
  });

  test('a tombstone outranks every computation of its id with no more transitions', () => {
    for (let i = 0; i < runs; i += 1) {
      const t = transitions();
      const buried = computedVersion(signals(), t);
      expect(tombstoneVersion(buried)).toBeGreaterThan(computedVersion(signals(), t));
    }
  });

  test('a computation that knows of a newer transition outranks a tombstone of its id', () => {
    for (let i = 0; i < runs; i += 1) {
      const t = transitions();
      expect(computedVersion(signals(), t + 1)).toBeGreaterThan(tombstoneVersion(computedVersion(signals(), t)));
    }
  });

  test('an incident that comes back from a tombstone outranks the tombstone', () => {
    for (let i = 0; i < runs; i += 1) {
      const tombstone = tombstoneVersion(computedVersion(signals(), transitions()));
      expect(revivedVersion(tombstone)).toBeGreaterThan(tombstone);
    }
  });

  test('versions stay exact integers at the bounds', () => {
    expect(Number.isSafeInteger(tombstoneVersion(computedVersion(maxSignals, 1_000_000)))).toBe(true);
  });
});
