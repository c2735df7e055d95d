import fs from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { mitigationOfPath, type ListedPath } from './announced-paths';
import type { Mitigation } from '../../core/mitigation';
import { mitigationFamilies, mitigationPath, type GobgpFamily } from './mitigations';

/**
 * The BGP speaker mitigations are announced through: gobgpd, driven over its
 * gRPC API (`apipb.GobgpApi` of GoBGP 3.10). It holds no state of its own:
 * what is announced is read back from the speaker, so a reconciler can
 * compare it with the service's record of what should be.
 */
export interface BgpSpeakerConfig {
  /** `host:port` of gobgpd's API. It has no authentication: keep it on loopback. */
  address: string;
  /** The folder holding gobgpd's gobgp.proto, attribute.proto and capability.proto (the set-up fetches them). */
  protoDir: string;
  /** Every call's deadline; a speaker slower than this counts as down. */
  callTimeoutMs?: number;
  /**
   * TLS to the speaker's API (gobgpd --tls): the CA its certificate is
   * checked against. gobgpd checks no client certificate, so TLS hides and
   * authenticates the speaker, not the service: its API still belongs on a
   * protected network.
   */
  tls?: { caFile: string };
}

export const defaultCallTimeoutMs = 5_000;

/** A router the speaker announces to: the operator's configuration. */
export interface Neighbour {
  address: string;
  asn: number;
  /** The remote BGP port, 179 unless the router listens elsewhere. */
  port?: number;
  /** The address the speaker connects from. */
  localAddress?: string;
  /** Short, so a frozen speaker's routes leave the router soon (RFC 4271's minimum is 3 s). */
  holdTimeSeconds?: number;
  /** How long to wait before connecting again after a failed attempt. */
  connectRetrySeconds?: number;
  /** eBGP across more than one hop (and over loopback). */
  multihop?: boolean;
  description?: string;
  /**
   * The most prefixes the speaker takes from this router per family before
   * it ends the session (BGP's max-prefix): the service needs none of the
   * router's routes, so a router that sends a table is a misconfiguration.
   */
  maxPrefixes?: number;
}

/** A neighbour's max-prefix when its configuration names none. */
export const defaultMaxPrefixes = 100;

/**
 * The speaker's one routing policy, assigned to its global import and export
 * with a default of reject: only the paths it originated (the service's
 * mitigations, GoBGP's route type LOCAL) enter its table and leave it. A
 * route a router sends is neither kept nor passed on to another router.
 */
export const ownRoutesPolicy = 'nettel-own-routes-only';
const ownRoutesOnly = { name: ownRoutesPolicy, statements: [{ name: `${ownRoutesPolicy}-local`, conditions: { route_type: 'ROUTE_TYPE_LOCAL' }, actions: { route_action: 'ACCEPT' } }] };

/** The speaker failed a call; `code` is the gRPC status when it answered one. */
export class BgpSpeakerError extends Error {
  constructor(
    message: string,
    readonly code: grpc.status | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'BgpSpeakerError';
  }
}

/** The speaker is down, unreachable or too slow: the call may be tried again. */
export class SpeakerUnavailableError extends BgpSpeakerError {
  constructor(message: string, code: grpc.status | undefined, options?: { cause?: unknown }) {
    super(message, code, options);
    this.name = 'SpeakerUnavailableError';
  }
}

/** The speaker answered and refused: trying again will not help. */
export class SpeakerRefusedError extends BgpSpeakerError {
  constructor(message: string, code: grpc.status | undefined, options?: { cause?: unknown }) {
    super(message, code, options);
    this.name = 'SpeakerRefusedError';
  }
}

const retryable = new Set([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED, grpc.status.CANCELLED]);

function speakerError(context: string, err: unknown): BgpSpeakerError {
  const code = (err as Partial<grpc.ServiceError>).code;
  const details = (err as Partial<grpc.ServiceError>).details ?? (err as Error).message;
  const Kind = code === undefined || retryable.has(code) ? SpeakerUnavailableError : SpeakerRefusedError;
  return new Kind(`${context}: ${details}`, code, { cause: err });
}

type Unary = (request: object, options: grpc.CallOptions, callback: (err: grpc.ServiceError | null, response: unknown) => void) => void;
type ServerStream = (request: object, options: grpc.CallOptions) => grpc.ClientReadableStream<unknown>;

export class BgpSpeaker {
  private client?: grpc.Client;

  constructor(private readonly config: BgpSpeakerConfig) {}

  /** Loads the API definition and waits until the speaker accepts a connection. */
  async start(): Promise<void> {
    // gobgp.proto carries path attributes as google.protobuf.Any: their types (attribute.proto) are loaded beside it, so they encode and decode.
    const files = ['gobgp.proto', 'attribute.proto', 'capability.proto'].map((f) => path.join(this.config.protoDir, f));
    const definition = protoLoader.loadSync(files, {
      keepCase: true,
      longs: Number,
      enums: String,
      json: true,
      includeDirs: [this.config.protoDir],
    });
    const api = grpc.loadPackageDefinition(definition) as unknown as { apipb: { GobgpApi: grpc.ServiceClientConstructor } };
    const credentials = this.config.tls ? grpc.credentials.createSsl(fs.readFileSync(this.config.tls.caFile)) : grpc.credentials.createInsecure();
    const client = new api.apipb.GobgpApi(this.config.address, credentials);
    this.client = client;
    await new Promise<void>((resolve, reject) =>
      client.waitForReady(this.deadline(), (err) =>
        err ? reject(new SpeakerUnavailableError(`bgp speaker at ${this.config.address} is not reachable: ${err.message}`, undefined, { cause: err })) : resolve(),
      ),
    );
  }

  /** Whether start() made a client (it may still be waiting for the speaker to answer). */
  get connected(): boolean {
    return this.client !== undefined;
  }

  /** Closes the connection; the speaker keeps what it announces (withdrawing is the caller's decision). */
  stop(): Promise<void> {
    this.client?.close();
    this.client = undefined;
    return Promise.resolve();
  }

  async addNeighbour(n: Neighbour): Promise<void> {
    const hold = n.holdTimeSeconds ?? 9;
    const peer = {
      conf: { neighbor_address: n.address, peer_asn: n.asn, description: n.description ?? '' },
      transport: { local_address: n.localAddress ?? '', remote_port: n.port ?? 179 },
      timers: { config: { hold_time: hold, keepalive_interval: Math.max(1, Math.floor(hold / 3)), connect_retry: n.connectRetrySeconds ?? 5 } },
      ebgp_multihop: n.multihop ? { enabled: true, multihop_ttl: 255 } : undefined,
      afi_safis: mitigationFamilies.map((family) => ({
        config: { family, enabled: true },
        prefix_limits: { family, max_prefixes: n.maxPrefixes ?? defaultMaxPrefixes, shutdown_threshold_pct: 80 },
      })),
    };
    await this.unary('AddPeer', { peer }, `unable to add neighbour ${n.address}`);
  }

  /**
   * Makes the speaker's global import and export take only its own routes
   * (ownRoutesPolicy, default reject), unless they already do; a speaker
   * that restarted has lost them. Returns whether it changed anything.
   */
  async keepOwnRoutesOnly(): Promise<boolean> {
    let changed = false;
    for (const direction of ['IMPORT', 'EXPORT'] as const) {
      const rows = (await this.serverStream('ListPolicyAssignment', { name: 'global', direction }, 'unable to read the routing policy')) as Array<{
        assignment?: { policies?: Array<{ name?: string }>; default_action?: string };
      }>;
      const assigned = rows.flatMap((r) => r.assignment?.policies ?? []).some((p) => p.name === ownRoutesPolicy);
      if (assigned && rows.every((r) => r.assignment?.default_action === 'REJECT')) continue;
      if (!changed) await this.definePolicy();
      const policies = assigned ? [] : [{ name: ownRoutesPolicy }];
      await this.unary('AddPolicyAssignment', { assignment: { name: 'global', direction, policies, default_action: 'REJECT' } }, `unable to assign the ${direction.toLowerCase()} policy`);
      changed = true;
    }
    // Routes a router sent before (a speaker this service did not configure) are judged again under the policy: dropped, and withdrawn from the others.
    if (changed) await this.unary('ResetPeer', { address: 'all', soft: true, direction: 'BOTH' }, 'unable to apply the routing policy to the neighbours');
    return changed;
  }

  private async definePolicy(): Promise<void> {
    const rows = (await this.serverStream('ListPolicy', {}, 'unable to read the routing policy')) as Array<{ policy?: { name?: string } }>;
    if (rows.some((r) => r.policy?.name === ownRoutesPolicy)) return;
    await this.unary('AddPolicy', { policy: ownRoutesOnly, refer_existing_statements: false }, 'unable to define the routing policy');
  }

  async removeNeighbour(address: string): Promise<void> {
    await this.unary('DeletePeer', { address }, `unable to remove neighbour ${address}`);
  }

  /**
   * The neighbours, their BGP session state (`ESTABLISHED` once routes flow)
   * and gobgpd's admin state: `PFX_CT` once a neighbour sent more prefixes
   * than its max-prefix (gobgpd then keeps the session down).
   */
  async neighbours(): Promise<Array<{ address: string; state: string; adminState: string }>> {
    type Row = { peer?: { state?: { neighbor_address?: string; session_state?: string; admin_state?: string } } };
    const rows = (await this.serverStream('ListPeer', {}, 'unable to list neighbours')) as Row[];
    return rows.map((r) => ({ address: r.peer?.state?.neighbor_address ?? '', state: r.peer?.state?.session_state ?? 'UNKNOWN', adminState: r.peer?.state?.admin_state ?? 'UP' }));
  }

  /** Announces the mitigation to every neighbour; announcing it again changes nothing. */
  async announce(m: Mitigation): Promise<void> {
    const p = mitigationPath(m);
    await this.unary('AddPath', { table_type: 'GLOBAL', path: p }, `unable to announce ${m.action}`);
  }

  /** Withdraws the mitigation from every neighbour; withdrawing one that is not announced changes nothing. */
  async withdraw(m: Mitigation): Promise<void> {
    const p = mitigationPath(m);
    await this.unary('DeletePath', { table_type: 'GLOBAL', family: p.family, path: p }, `unable to withdraw ${m.action}`);
  }

  /** What the speaker announces now, read from its own table: the ground truth after any restart. */
  async announced(): Promise<Mitigation[]> {
    const found: Mitigation[] = [];
    for (const family of mitigationFamilies) {
      for (const path of await this.localPaths(family)) {
        const m = mitigationOfPath(path);
        if (m) found.push(m);
      }
    }
    return found;
  }

  /** The paths this speaker originated (not those a router sent it) in one family. */
  private async localPaths(family: GobgpFamily): Promise<ListedPath[]> {
    const rows = (await this.serverStream('ListPath', { table_type: 'GLOBAL', family }, 'unable to list announced routes')) as Array<{
      destination?: { paths?: Array<ListedPath & { is_from_external?: boolean; neighbor_ip?: string }> };
    }>;
    return rows.flatMap((r) => r.destination?.paths ?? []).filter((p) => !p.is_from_external && isLocal(p.neighbor_ip));
  }

  private deadline(): Date {
    return new Date(Date.now() + (this.config.callTimeoutMs ?? defaultCallTimeoutMs));
  }

  private method<T>(name: string): T {
    if (!this.client) throw new SpeakerUnavailableError('bgp speaker is not started', undefined);
    const fn = (this.client as unknown as Record<string, (...args: unknown[]) => unknown>)[name]!;
    return fn.bind(this.client) as T;
  }

  private unary(name: string, request: object, context: string): Promise<unknown> {
    const call = this.method<Unary>(name);
    return new Promise((resolve, reject) =>
      call(request, { deadline: this.deadline() }, (err, response) => (err ? reject(speakerError(context, err)) : resolve(response))),
    );
  }

  private serverStream(name: string, request: object, context: string): Promise<unknown[]> {
    const stream = this.method<ServerStream>(name)(request, { deadline: this.deadline() });
    const rows: unknown[] = [];
    return new Promise((resolve, reject) => {
      stream.on('data', (row: unknown) => rows.push(row));
      stream.on('error', (err) => reject(speakerError(context, err)));
      stream.on('end', () => resolve(rows));
    });
  }
}

/** GoBGP names no neighbour (`<nil>`, or nothing) for a path it originated. */
const isLocal = (neighbourIp: string | undefined) => !neighbourIp || neighbourIp === '<nil>' || neighbourIp === '0.0.0.0' || neighbourIp === '::';
