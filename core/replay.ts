import type { Person } from './person';
import type { Incident } from './correlation';

export const replayStatuses = ['queued', 'running', 'awaiting_approval', 'completed', 'denied', 'failed', 'expired'] as const;
export type ReplayStatus = (typeof replayStatuses)[number];
export const terminalStatuses: readonly ReplayStatus[] = ['completed', 'denied', 'failed', 'expired'];

/** One approver's decision on a replay. */
export interface Approval {
  decision: 'approve' | 'deny';
  approver_key_id: string;
  /** The person who decided; absent from decisions taken before persons were recorded. */
  person?: Person | null;
  at: number;
  comment?: string;
}

/**
 * What a replay covers and how its result is judged, as pure functions.
 * The history window starts one correlation window before the incident's
 * first signal and lasts `window_minutes` (default: the incident's span plus
 * one correlation window on each side).
 */
export interface ReplayWindow {
  from: number;
  to: number;
  window_minutes: number;
}

/** The longest window any setting may let a replay run on (REPLAY_MAX_WINDOW_MINUTES is at most this): 30 days. */
export const maxReplayWindowMinutes = 43_200;

export function replayWindow(incident: Pick<Incident, 'first_seen' | 'last_seen'>, correlationWindowMs: number, requestedMinutes?: number): ReplayWindow {
  const from = incident.first_seen - correlationWindowMs;
  const minutes = requestedMinutes ?? Math.ceil((incident.last_seen - incident.first_seen + 2 * correlationWindowMs) / 60_000);
  return { from, to: from + minutes * 60_000, window_minutes: minutes };
}

/** Why a window is over the cap of `maxMinutes` (a requested one, or the incident's default), or undefined when it is not. */
export function windowOverCap(window: ReplayWindow, requestedMinutes: number | undefined, maxMinutes: number): string | undefined {
  if (window.window_minutes <= maxMinutes) return undefined;
  if (requestedMinutes !== undefined) return `window_minutes is at most ${maxMinutes} (REPLAY_MAX_WINDOW_MINUTES): ask for a shorter window`;
  return (
    `the incident's replay window would be ${window.window_minutes} minutes (its span and a correlation window on each side), ` +
    `over the ${maxMinutes}-minute cap (REPLAY_MAX_WINDOW_MINUTES): ask for window_minutes of at most ${maxMinutes}`
  );
}

/** The fields a replay must reproduce for parity. */
const parityFields = ['id', 'severity', 'state', 'signal_count', 'first_seen', 'last_seen', 'kinds', 'rule', 'escalations'] as const;

export interface ParityDifference {
  field: (typeof parityFields)[number];
  recorded: unknown;
  replayed: unknown;
}

export function compareIncidents(recorded: Incident, replayed: Incident | undefined): { parity: boolean; differences: ParityDifference[] } {
  const differences: ParityDifference[] = [];
  for (const field of parityFields) {
    const a = recorded[field];
    const b = replayed?.[field];
    if (JSON.stringify(a) !== JSON.stringify(b)) differences.push({ field, recorded: a, replayed: b ?? null });
  }
  return { parity: differences.length === 0, differences };
}
