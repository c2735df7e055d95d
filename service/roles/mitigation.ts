import { gobgpProtoDir } from '../../engines/gobgp';
import { PrefixesRepo } from '../../storage/prefixes-repo';
import { MitigationLedger } from '../../streams/mitigation-ledger';
import { BgpSpeaker } from '../../workers/mitigation/bgp-speaker';
import { MitigationReconciler } from '../../workers/mitigation/mitigation-reconciler';
import type { Config } from '../config';
import type { Adapters } from './adapters';
import type { EngineAddresses } from './engines';

/** How often the speaker is compared with the ledger: a route outlives its end by about this at most. */
const reconcileIntervalMs = 1_000;
/** An ended mitigation is forgotten by the ledger a day after its end (the audit ledger keeps its history). */
const keepEndedMs = 24 * 3_600_000;

/**
 * Mitigations, in the temporal-worker role: the ledger of what should be
 * announced, the BGP speaker's client, and the reconciler that makes the one
 * match the other. Absent when no speaker is wanted (BGP_SPEAKER_ADDRESS=off).
 */
export function mitigationRole(config: Config, a: Adapters, speakerAt: NonNullable<EngineAddresses['bgpSpeaker']>) {
  const speakerAddress = speakerAt.address;
  const ledger = new MitigationLedger({ nats: a.nats, prefix: config.nats.prefix, replicas: config.nats.replicas, signingKey: config.decisions.signingKey });
  const speaker = new BgpSpeaker({ address: speakerAddress, tls: speakerAt.tls, protoDir: gobgpProtoDir(config.toolsDir) });
  const neighbours = config.bgp.neighbours.map((n) => ({ ...n, holdTimeSeconds: config.bgp.holdTimeSeconds, maxPrefixes: config.bgp.neighbourMaxPrefixes }));
  const prefixes = new PrefixesRepo(a.clickhouse);
  const reconciler = new MitigationReconciler(
    { intervalMs: reconcileIntervalMs, neighbours, keepEndedMs },
    { speaker, ledger, approvedPrefixes: (orgId) => prefixes.approved(orgId), registry: a.registry, log: a.log },
  );
  // A speaker that is down at start does not stop the service: the reconciler's probe says so, and it catches up once the speaker answers.
  const speakerComponent = {
    start: () => speaker.start().catch((err: unknown) => a.log.error({ err, speaker: speakerAddress }, 'the BGP speaker is not reachable; mitigations wait for it')),
    stop: () => speaker.stop(),
  };
  return { components: [ledger, speakerComponent, reconciler], ledger, speaker, reconciler };
}
