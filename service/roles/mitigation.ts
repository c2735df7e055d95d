import { gobgpProtoDir } from '../../engines/gobgp';
import { PrefixesRepo } from '../../storage/prefixes-repo';
import { MitigationLedger } from '../../streams/mitigation-ledger';
import { BgpSpeaker } from '../../workers/mitigation/bgp-speaker';
import { MitigationReconciler } from '../../workers/mitigation/mitigation-reconciler';
import { reconcileIntervalMs } from '../../workers/mitigation/mitigation-reconciler.config';
import { ReconcilerLease } from '../../workers/mitigation/reconciler-lease';
import type { Config } from '../config';
import { speakerLeaseOf } from '../jetstream-objects';
import type { Adapters } from './adapters';
import type { EngineAddresses } from './engines';

/** An ended mitigation is forgotten by the ledger a day after its end (the audit ledger keeps its history). */
const keepEndedMs = 24 * 3_600_000;

/**
 * Mitigations, in the temporal-worker role: the ledger of what should be
 * announced, the BGP speaker's client and its lease, and the reconciler that
 * makes the one match the other. Absent when no speaker is wanted
 * (BGP_SPEAKER_ADDRESS=off).
 */
export function mitigationRole(config: Config, a: Adapters, speakerAt: NonNullable<EngineAddresses['bgpSpeaker']>) {
  const speakerAddress = speakerAt.address;
  const ledger = new MitigationLedger({ nats: a.nats, prefix: config.nats.prefix, replicas: config.nats.replicas, signingKey: config.decisions.signingKey });
  const speaker = new BgpSpeaker({ address: speakerAddress, tls: speakerAt.tls, protoDir: gobgpProtoDir(config.toolsDir) });
  const neighbours = config.bgp.neighbours.map((n) => ({ ...n, holdTimeSeconds: config.bgp.holdTimeSeconds, maxPrefixes: config.bgp.neighbourMaxPrefixes }));
  const prefixes = new PrefixesRepo(a.clickhouse);
  const lease = speakerLeaseOf(config, a.nats, speakerAddress);
  const reconciler = new MitigationReconciler(
    { intervalMs: reconcileIntervalMs, neighbours, keepEndedMs },
    { speaker, ledger, lease: new ReconcilerLease(lease, a), approvedPrefixes: (orgId) => prefixes.approved(orgId), registry: a.registry, log: a.log },
  );
  // A speaker that is down at start does not stop the service: the reconciler's probe says so, and it catches up once the speaker answers.
  const speakerComponent = {
    start: () => speaker.start().catch((err: unknown) => a.log.error({ err, speaker: speakerAddress }, 'the BGP speaker is not reachable; mitigations wait for it')),
    stop: () => speaker.stop(),
  };
  return { components: [ledger, lease, speakerComponent, reconciler], ledger, speaker, reconciler };
}
