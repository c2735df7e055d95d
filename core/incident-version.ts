/**
 * How computations of one incident rank. Incidents are stored as versioned
 * rows and the highest version wins, so these weights are the contract
 * between the engine, the correlator and ClickHouse's ReplacingMergeTree:
 *
 * - a computation's version is its signal count plus `transitionWeight` per
 *   transition it applied: one that knows of a transition outranks any that
 *   does not, and among equals the one with more signals wins;
 * - a tombstone (the incident's id moved because a late, earlier signal
 *   arrived) is the buried computation's version plus `tombstoneWeight`, so a
 *   stale computation of the old id, with no more transitions, cannot bring it
 *   back; a computation that does come back takes the tombstone's version + 1.
 *
 * The bounds hold while an incident holds fewer than `maxSignals` signals.
 */
export const transitionWeight = 1_000_000_000;
export const tombstoneWeight = 1_000_000;
export const maxSignals = tombstoneWeight - 1;

export const computedVersion = (signalCount: number, transitions: number) => signalCount + transitions * transitionWeight;
export const tombstoneVersion = (buried: number) => buried + tombstoneWeight;
export const revivedVersion = (tombstone: number) => tombstone + 1;
