import { ApplicationFailure } from '@temporalio/activity';
import type { RulesOfIncident } from '../../../core/correlation';
import {
  atVersion,
  correlationRulesOf,
  detectorRulesOf,
  historyOf,
  rulesOfIncidents,
  type RecordedRulesVersion,
} from '../../../core/detection-rules';
import type { DetectorRules } from '../../../core/detectors';
import type { RateRules } from '../../../core/detection/rules';
import type { DetectionRulesSource } from '../../../application/detection-rules-service';

/** The rules a replay re-runs an incident under. */
export interface ReplayRules {
  /** The incident's correlation window: the replay's history starts one window before its first signal. */
  windowMs: number;
  detectors: DetectorRules;
  /** The rate detectors' rules of the incident's version. */
  rates: RateRules;
  /** Each incident the replay computes, under the version it was recorded with (the replayed incident's for any other). */
  ofIncidents: RulesOfIncident;
}

/**
 * The detection-rules version an incident recorded, so a replay re-runs it
 * under the rules it was computed with, whatever the workspace has set
 * since: parity then compares like with like. The other incidents of the key
 * within the window keep their own recorded versions. No source: the
 * defaults (version 0) only.
 */
export async function replayRules(
  source: DetectionRulesSource | undefined,
  recorded: RecordedRulesVersion & { org_id: string },
  others: readonly RecordedRulesVersion[] = [],
): Promise<ReplayRules> {
  const through = others.reduce((m, i) => Math.max(m, i.rules_version), recorded.rules_version);
  const history = source ? await source.history(recorded.org_id, through) : historyOf([]);
  const version = atVersion(history, recorded.rules_version);
  if (!version) throw ApplicationFailure.nonRetryable(`the incident's detection rules version ${recorded.rules_version} is not stored`, 'NOT_FOUND');
  return {
    windowMs: correlationRulesOf(version).windowMs,
    detectors: detectorRulesOf(version),
    rates: version.rules.rates,
    ofIncidents: rulesOfIncidents(history, [recorded, ...others], version),
  };
}
