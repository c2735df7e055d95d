import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { loadConfig } from '../../service/config';
import { clusterDdl } from '../../storage/cluster-ddl';

const deploy = path.resolve(__dirname, '../../deploy');

/** What the tests read of a Kubernetes manifest: a ConfigMap's data, a Deployment's containers' environment. */
interface Manifest {
  kind: string;
  data?: Record<string, string>;
  spec?: { template: { spec: { containers: Array<{ env: Array<{ name: string; value: string }> }> } } };
}

/** What the tests read of the compose file: each service's environment. */
interface ComposeFile {
  services: Record<string, { environment: Record<string, string> }>;
}

describe('deployment files', () => {
  test('the cluster DDL is exactly what the migrations generate', () => {
    expect(fs.readFileSync(path.join(deploy, 'clickhouse/cluster.sql'), 'utf8')).toBe(clusterDdl());
  });

  test('every table of the cluster DDL is replicated', () => {
    const engines = clusterDdl().match(/ENGINE = \w+/g) ?? [];
    expect(engines.length).toBeGreaterThan(5);
    for (const engine of engines) expect(engine).toMatch(/^ENGINE = Replicated/);
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
    const compose = parse(fs.readFileSync(path.join(deploy, 'compose.yaml'), 'utf8'), { merge: true }) as ComposeFile;
    const roles = ['api', 'stream-workers', 'temporal-worker', 'collector'].map((s) => compose.services[s]?.environment);
    expect(roles.map((e) => e?.ROLES)).toEqual(['api', 'stream-workers', 'temporal-worker', 'collector']);
    for (const env of roles) expect(env?.CLICKHOUSE_URL).toBe('http://clickhouse:8123');
  });
});
