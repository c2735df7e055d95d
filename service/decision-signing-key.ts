import { DecisionTokens } from '../core/decision-token';
import type { Config } from './config';
import { sharedSecretOf } from './data-folder-secret';

/**
 * DECISION_SIGNING_KEY, resolved at start. The api signs a replay decision's
 * token and the temporal-worker checks it, so both hold the same key:
 * generated once into the data folder on the embedded default, required with
 * a ClickHouse server by a process that runs either role.
 */
export function decisionSigningKeyOf(config: Config): string | undefined {
  return sharedSecretOf(config, { setting: 'DECISION_SIGNING_KEY', given: config.decisions.signingKey, usedBy: ['api', 'temporal-worker'], file: 'decision-signing-key' });
}

/** The signer and checker of decision tokens, for a role that needs them; the start resolved the key (decisionSigningKeyOf). */
export function decisionTokensOf(config: Config): DecisionTokens {
  const key = config.decisions.signingKey;
  if (!key) throw new Error('DECISION_SIGNING_KEY is not resolved: start the process with startStack');
  return new DecisionTokens(key);
}
