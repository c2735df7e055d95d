import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { TrustedProxies } from '../../core/client-address';
import { goflow2BinaryName } from '../../engines/binaries';
import { loadConfig } from '../../service/config';
import { withSharedSecrets } from '../../service/stack';
import { clusterDdl } from '../../storage/cluster-ddl';

const deploy = path.resolve(__dirname, '../../deploy');

/** What the tests read of a Kubernetes manifest: a ConfigMap's data, a Deployment's containers' environment. */
interface Manifest {
  kind: string;
  data?: Record<string, string>;
  spec?: { template: { spec: { containers: Array<{ env: Array<{ name: string; value: string }> }> } } };
}

/** What the tests read of the compose file: each service's environment, and the NATS nodes' image, command and volumes. */
interface ComposeFile {
  services: Record<string, { environment: Record<string, string>; image?: string; command?: string[]; volumes?: string[] }>;
}

const readCompose = () => parse(fs.readFileSync(path.join(deploy, 'compose.yaml'), 'utf8'), { merge: true }) as ComposeFile;
const roleNames = ['api', 'stream-workers', 'temporal-worker', 'collector'];

describe('deployment files', () => {
  test('the cluster DDL is exactly what the migrations generate', () => {
    expect(fs.readFileSync(path.join(deploy, 'clickhouse/cluster.sql'), 'utf8')).toBe(clusterDdl());
  });

  test('every table of the cluster DDL is replicated', () => {
    const engines = clusterDdl().match(/ENGINE = \w+/g) ?? [];
    expect(engines.length).toBeGreaterThan(5);
    for (const engine of engines) expect(engine).toMatch(/^ENGINE = Replicated/);
  });

  test('the image runs the GoFlow2 build the set-up makes, installs with npm ci, and starts no BGP speaker of its own', () => {
    const dockerfile = fs.readFileSync(path.join(deploy, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain(`GOFLOW2=/usr/local/bin/${goflow2BinaryName}`);
    expect(dockerfile).toMatch(/RUN npm ci /);
    expect(dockerfile).toMatch(/ENV .*BGP_SPEAKER_ADDRESS=off/);
  });

  test('every Node.js stage of the image runs the line CI tests on (scripts/node-runtime.json), not an ended one', () => {
    const dockerfile = fs.readFileSync(path.join(deploy, 'Dockerfile'), 'utf8');
    const pin = JSON.parse(fs.readFileSync(path.join(deploy, '..', 'scripts', 'node-runtime.json'), 'utf8')) as { minimumMajor: number; version: string };
    const lines = [...dockerfile.matchAll(/^FROM node:(\d+)-/gm)].map((m) => Number(m[1]));
    expect(lines).toEqual([pin.minimumMajor, pin.minimumMajor, pin.minimumMajor]);
    expect(Number(pin.version.split('.')[0])).toBe(pin.minimumMajor);
  });

  test('the Kubernetes manifests parse, and each Deployment runs one valid role against configured engines', () => {
    const docs = parseAllDocuments(fs.readFileSync(path.join(deploy, 'kubernetes/nettel.yaml'), 'utf8')).map((d) => d.toJS() as Manifest);
    const configMap = docs.find((d) => d.kind === 'ConfigMap');
    const deployments = docs.filter((d) => d.kind === 'Deployment');
    expect(deployments.map((d) => d.spec?.template.spec.containers[0]?.env[0]?.value).sort()).toEqual(['api', 'collector', 'stream-workers', 'temporal-worker']);
    for (const d of deployments) {
      const role = d.spec?.template.spec.containers[0]?.env[0]?.value;
      const config = loadConfig({ ...configMap?.data, ROLES: role, ADMIN_API_KEY: 'x'.repeat(32) });
      expect(config.nats.url && config.clickhouse.url && config.temporal.address).toBeTruthy();
    }
  });

  test('the compose file parses and runs every role against the same engines', () => {
    const compose = readCompose();
    const roles = roleNames.map((s) => compose.services[s]?.environment);
    expect(roles.map((e) => e?.ROLES)).toEqual(['api', 'stream-workers', 'temporal-worker', 'collector']);
    for (const env of roles) expect(env?.CLICKHOUSE_URL).toBe('http://clickhouse:8123');
  });

  test('the compose file gives the roles that sign and check replay decisions one DECISION_SIGNING_KEY, which the start requires', () => {
    const compose = readCompose();
    for (const role of ['api', 'temporal-worker']) {
      expect(compose.services[role]?.environment.DECISION_SIGNING_KEY).toBe('${DECISION_SIGNING_KEY:?set DECISION_SIGNING_KEY}');
    }
  });

  test('every role of the compose file starts with the keys the roles share (a start without one would fail naming it)', () => {
    const compose = readCompose();
    // `${NAME:?message}`: compose itself refuses to run without it.
    const given = (env: Record<string, string>) => Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.replace(/\$\{[A-Z_]+:\?[^}]*\}/g, 'k'.repeat(32))]));
    for (const role of ['api', 'stream-workers', 'temporal-worker', 'collector']) {
      const config = loadConfig({ ...given(compose.services[role]!.environment), DATA_DIR: '/nonexistent' });
      expect(() => withSharedSecrets(config)).not.toThrow();
    }
  });

  test('every role of both deployments keeps three copies of each stream and bucket', () => {
    const docs = parseAllDocuments(fs.readFileSync(path.join(deploy, 'kubernetes/nettel.yaml'), 'utf8')).map((d) => d.toJS() as Manifest);
    const configMap = docs.find((d) => d.kind === 'ConfigMap');
    const compose = readCompose();
    const envs = [...roleNames.map((role) => ({ ...configMap?.data, ROLES: role })), ...roleNames.map((s) => compose.services[s]!.environment)];
    for (const env of envs) expect(loadConfig({ ...env, ADMIN_API_KEY: 'x'.repeat(32) }).nats.replicas).toBe(3);
  });

  test('the compose file runs three nats-server 2.15 nodes, each syncing before it acknowledges', () => {
    const compose = readCompose();
    const nodes = Object.entries(compose.services).filter(([name]) => name.startsWith('nats-'));
    expect(nodes.map(([name]) => name)).toEqual(['nats-1', 'nats-2', 'nats-3']);
    for (const [, node] of nodes) {
      expect(node.image).toMatch(/^nats:2\.15\./);
      const mount = node.volumes?.find((v) => v.endsWith(':/etc/nats/nettel.conf:ro'));
      expect(mount && node.command?.join(' ')).toContain('-c /etc/nats/nettel.conf');
      const settings = fs.readFileSync(path.join(deploy, mount!.split(':')[0]!), 'utf8');
      expect(/jetstream \{([^}]*)\}/.exec(settings)?.[1]).toMatch(/^\s*sync_interval: always$/m);
    }
  });

  test('both deployments put the API behind a proxy it trusts to name each client, so clients are throttled one by one', () => {
    const secrets = { ADMIN_API_KEY: 'x'.repeat(32), DECISION_SIGNING_KEY: 'y'.repeat(32), WEBHOOK_SECRETS_KEY: 'z'.repeat(32) };
    const compose = parse(fs.readFileSync(path.join(deploy, 'compose.yaml'), 'utf8'), { merge: true }) as {
      services: Record<string, { environment?: Record<string, string>; ports?: string[]; volumes?: string[]; networks?: { default?: { ipv4_address?: string } } }>;
    };
    const proxy = compose.services.proxy!;
    expect(proxy.ports).toEqual(['8080:8080']);
    expect(compose.services.api!.ports).toBeUndefined();
    const composeApi = loadConfig({ ...compose.services.api!.environment, ...secrets });
    expect(composeApi.auth.trustedProxies).toEqual([proxy.networks?.default?.ipv4_address]);
    const nginx = fs.readFileSync(path.join(deploy, proxy.volumes![0]!.split(':')[0]!), 'utf8');
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-For \$remote_addr;/);

    const docs = parseAllDocuments(fs.readFileSync(path.join(deploy, 'kubernetes/nettel.yaml'), 'utf8')).map((d) => d.toJS() as Manifest);
    const ingress = docs.find((d) => d.kind === 'Ingress') as unknown as { spec: { rules: Array<{ http: { paths: Array<{ backend: { service: { name: string } } }> } }> } };
    expect(ingress.spec.rules[0]?.http.paths[0]?.backend.service.name).toBe('nettel-api');
    const api = docs.find((d) => d.kind === 'Deployment' && d.spec?.template.spec.containers[0]?.env[0]?.value === 'api');
    const env = Object.fromEntries((api?.spec?.template.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    const kubeApi = loadConfig({ ...docs.find((d) => d.kind === 'ConfigMap')?.data, ...env, ...secrets });
    expect(new TrustedProxies(kubeApi.auth.trustedProxies).has('10.244.3.7')).toBe(true);
  });
});

describe('the engines of both deployments take only clients with credentials', () => {
  const natsRoles = ['api', 'stream-workers', 'temporal-worker', 'collector'];
  const passwordVariable = (user: string) => `NETTEL_NATS_${user.toUpperCase().replace(/-/g, '_')}_PASSWORD`;
  const fromEnvFile = (variable: string) => `\${${variable}:?set ${variable}}`;
  /** The users of deploy/nats/nettel.conf, each with the environment variable its password comes from. */
  const natsUsers = () => {
    const conf = fs.readFileSync(path.join(deploy, 'nats/nettel.conf'), 'utf8');
    return Object.fromEntries([...conf.matchAll(/\{ user: ([\w-]+), password: \$(\w+),/g)].map((m) => [m[1]!, m[2]!]));
  };
  const kubeDocs = () => parseAllDocuments(fs.readFileSync(path.join(deploy, 'kubernetes/nettel.yaml'), 'utf8')).map((d) => d.toJS() as KubeObject);
  interface KubeObject {
    kind: string;
    data?: Record<string, string>;
    spec: { template: { spec: { containers: Array<{ command?: string[]; env?: Array<{ value: string }>; envFrom: Array<{ secretRef?: { name: string } }> }>; volumes?: Array<{ secret?: { secretName: string } }> } } };
  }

  test('the NATS config has an admin and a user per role, each password from the node environment', () => {
    expect(natsUsers()).toEqual(Object.fromEntries(['admin', ...natsRoles].map((u) => [u, passwordVariable(u)])));
    expect(fs.readFileSync(path.join(deploy, 'nats/nettel.conf'), 'utf8')).not.toMatch(/no_auth_user/);
  });

  test('compose gives every NATS node every password and a route password, and each role its own user', () => {
    const compose = readCompose();
    for (const node of ['nats-1', 'nats-2', 'nats-3']) {
      const service = compose.services[node]!;
      for (const variable of Object.values(natsUsers())) expect(service.environment[variable]).toBe(fromEnvFile(variable));
      expect(service.command?.join(' ')).toMatch(/--cluster nats:\/\/route:\$\{NETTEL_NATS_ROUTE_PASSWORD[^}]*\}@0\.0\.0\.0:6222/);
    }
    for (const role of natsRoles) {
      const config = loadConfig({ ...compose.services[role]!.environment, DECISION_SIGNING_KEY: 'y'.repeat(32), WEBHOOK_SECRETS_KEY: 'z'.repeat(32) });
      expect(config.nats.auth).toEqual({ user: role, password: fromEnvFile(passwordVariable(role)) });
      expect(config.clickhouse).toMatchObject({ user: 'nettel', password: fromEnvFile('NETTEL_CLICKHOUSE_PASSWORD') });
      expect([config.temporal.tls?.caFile, config.temporal.tls?.certFile, config.temporal.tls?.keyFile].every(Boolean)).toBe(true);
    }
    const topology = compose.services['jetstream-topology'] as { command: string[]; environment: Record<string, string> };
    expect(topology.command.join(' ')).toContain('dist/service/nats-topology.js');
    expect(topology.environment.NATS_USER).toBe('admin');
  });

  test('compose runs ClickHouse, Temporal and its database with credentials', () => {
    const services = readCompose().services as Record<string, { environment: Record<string, string> }>;
    expect(services.clickhouse!.environment.CLICKHOUSE_PASSWORD).toBe(fromEnvFile('NETTEL_CLICKHOUSE_PASSWORD'));
    expect(services.temporal!.environment.TEMPORAL_TLS_REQUIRE_CLIENT_AUTH).toBe('true');
    expect(services.temporal!.environment.POSTGRES_PWD).toBe(fromEnvFile('NETTEL_POSTGRES_PASSWORD'));
    expect(services.postgres!.environment.POSTGRES_PASSWORD).toBe(fromEnvFile('NETTEL_POSTGRES_PASSWORD'));
  });

  test('Kubernetes gives each role its NATS user from a Secret of its own, and TLS to every engine', () => {
    const docs = kubeDocs();
    const configMap = docs.find((d) => d.kind === 'ConfigMap')!;
    const config = loadConfig({ ...configMap.data, ROLES: 'api' });
    expect(config.nats.tls?.caFile).toBeDefined();
    expect(config.clickhouse.tls?.caFile).toBeDefined();
    expect([config.temporal.tls?.caFile, config.temporal.tls?.certFile, config.temporal.tls?.keyFile].every(Boolean)).toBe(true);
    for (const d of docs.filter((x) => x.kind === 'Deployment')) {
      const container = d.spec.template.spec.containers[0]!;
      const role = container.env?.[0]?.value;
      const secrets = container.envFrom.map((e) => e.secretRef?.name).filter(Boolean);
      expect(secrets).toEqual(expect.arrayContaining([`nettel-nats-${role}`, 'nettel-clickhouse']));
      expect(d.spec.template.spec.volumes?.map((v) => v.secret?.secretName)).toEqual(['nettel-engines-tls']);
    }
    const job = docs.find((d) => d.kind === 'Job')!.spec.template.spec.containers[0]!;
    expect(job.command?.join(' ')).toContain('dist/service/nats-topology.js');
    expect(job.envFrom.map((e) => e.secretRef?.name)).toContain('nettel-nats-admin');
  });
});
