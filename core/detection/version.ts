/**
 * The rate detectors' version. The one mechanism that ties an incident to
 * what decided it is the `rule` text its first signal carries (core/detectors.ts
 * writes `traffic_volume>=…B/min`; the incident records it and a replay's
 * parity compares it): a rate decision's rule begins `rate.v<version>:`, so
 * the incident records the version it opened under, and a replay reads it
 * back (versionOfRule) and re-runs that version (core/detection/detect.ts
 * rateDetectors). A change to what the detectors decide for the same flows
 * and rules bumps the version and keeps the previous one runnable.
 *
 * Version 2 (the default for new detections) reports a host's window as soon
 * as its running sums reach a bound, before it closes
 * (core/detection/early-crossings.ts), so its signal must be the same whether
 * reported early or at the close: its rule names the scope only
 * (`rate.v2:host`, `rate.v2:prefix`) and its id leaves the rule out
 * (core/detection/signals.ts). Version 1 (`rate.v1:<scope>:<type>:<bounds>`)
 * judges closed windows only; it stays runnable for the replays of the
 * incidents it opened.
 */
export const rateDetectorVersion = 2;

const rulePattern = /^rate\.v(\d+):/;

/** The rule text of a rate decision: version 1 names the scope, type and bounds crossed; later versions the scope only. */
export function rateRule(version: number, scope: 'host' | 'prefix', type: string, crossed: readonly string[]): string {
  return version === 1 ? `rate.v1:${scope}:${type}:${crossed.join(',')}` : `rate.v${version}:${scope}`;
}

/** The detector version a rule was decided under, or undefined for a rule that is not a rate decision's. */
export function versionOfRule(rule: string): number | undefined {
  const m = rulePattern.exec(rule);
  return m ? Number(m[1]) : undefined;
}
