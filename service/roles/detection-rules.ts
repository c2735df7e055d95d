import { DetectionRulesCache, defaultDetectionRulesCacheConfig } from '../../application/detection-rules-service';
import { DetectionRulesRepo } from '../../storage/detection-rules-repo';
import type { Adapters } from './adapters';

const caches = new WeakMap<Adapters, DetectionRulesCache>();

/**
 * One cache of the workspaces' detection rules per process (its adapters):
 * the API, the stream workers and the Temporal worker of one process share
 * it, so a change made through this process applies here at once, and
 * through another process within the cache's TTL (2 s).
 */
export function detectionRulesCacheOf(a: Adapters): DetectionRulesCache {
  let cache = caches.get(a);
  if (!cache) {
    cache = new DetectionRulesCache(defaultDetectionRulesCacheConfig, { repo: new DetectionRulesRepo(a.clickhouse) });
    caches.set(a, cache);
  }
  return cache;
}
