/**
 * The rate detectors' version. The one mechanism that ties an incident to
 * what decided it is the `rule` text its first signal carries (core/detectors.ts
 * writes `traffic_volume>=…B/min`; the incident records it and a replay's
 * parity compares it): a rate decision's rule begins `rate.v<version>:`, so
 * the incident records the version it opened under, and a replay reads it
 * back (versionOfRule) and re-runs that version (core/detection/detect.ts
 * rateDetectors). A change to what the detectors decide for the same flows
 * and rules bumps the version and keeps the previous one runnable.
 */
export const rateDetectorVersion = 1;

const rulePattern = /^rate\.v(\d+):/;

/** The rule text of a rate decision: version, scope, type and the bounds crossed. */
export function rateRule(version: number, scope: 'host' | 'prefix', type: string, crossed: readonly string[]): string {
  return `rate.v${version}:${scope}:${type}:${crossed.join(',')}`;
}

/** The detector version a rule was decided under, or undefined for a rule that is not a rate decision's. */
export function versionOfRule(rule: string): number | undefined {
  const m = rulePattern.exec(rule);
  return m ? Number(m[1]) : undefined;
}
