import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { freePort, type LocalProcess } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { StoreTooSmallError } from '../../streams/put-stream';
import { defaultTopology, ensureTopology } from '../../streams/topology';
import { testNatsServer } from '../support/nats-server';
import { names } from '../../streams/names';

/**
 * JetStream reserves each stream's byte limit when the stream is created; a
 * server whose store bound cannot hold them refuses with a bare
 * "insufficient storage resources available". The service says which
 * stream asked for what, and which settings to change.
 */
describe('a NATS store bound too small for the streams', () => {
  let dir: string;
  let nats: LocalProcess;
  let nc: NatsConnection;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-store-bound-'));
    const port = await freePort();
    nats = testNatsServer(path.join(dir, 'nats'), port, createLogger('silent'), 1024 ** 3);
    await nats.start();
    nc = await connect({ servers: `127.0.0.1:${port}` });
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('creating the streams fails naming the stream, its reservation and the setting that bounds the store', async () => {
    const topology = defaultTopology(`bound${Date.now().toString(36)}`);
    const failure = ensureTopology(await nc.jetstreamManager(), topology);
    await expect(failure).rejects.toBeInstanceOf(StoreTooSmallError);
    await expect(failure).rejects.toThrow(`reserve ${topology.maxBytes} bytes for stream ${names(topology.prefix).stream}:`);
    await expect(failure).rejects.toThrow('EMBEDDED_NATS_MAX_FILE_STORE');
  });
});
