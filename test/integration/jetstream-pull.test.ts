import { randomBytes } from 'node:crypto';
import { AckPolicy, nanos, type JsMsg } from 'nats';
import { createLogger } from '../../observability/logger';
import { NatsClient } from '../../streams/nats-client';
import { JetStreamPull } from '../../workers/consume/jetstream-pull';

/**
 * The pull every consume loop reads through, against a real nats-server:
 * what it has taken from JetStream stays this worker's until it is
 * acknowledged, however long the worker takes to reach it.
 */
const ackWaitMs = 1_500;
let nats: NatsClient;
const stream = `PULL_${randomBytes(4).toString('hex').toUpperCase()}`;

beforeAll(async () => {
  nats = new NatsClient({ url: process.env.TEST_NATS_URL!, name: 'jetstream-pull-test' }, createLogger('warn', 'test'));
  await nats.start();
  await nats.jsm.streams.add({ name: stream, subjects: [`${stream.toLowerCase()}.>`] });
});
afterAll(async () => {
  await nats.jsm.streams.delete(stream);
  await nats.stop();
});

async function consumerOf(name: string, messages: number, ackWait = ackWaitMs): Promise<JetStreamPull> {
  await nats.jsm.consumers.add(stream, { durable_name: name, ack_policy: AckPolicy.Explicit, ack_wait: nanos(ackWait), filter_subject: `${stream.toLowerCase()}.${name}` });
  for (let i = 0; i < messages; i++) await nats.js().publish(`${stream.toLowerCase()}.${name}`, Buffer.from(String(i)));
  return new JetStreamPull({ stream, consumer: name, maxMessages: 10, ackWaitMs: ackWait }, { nats, prepare: () => Promise.resolve() });
}

const pending = async (name: string) => (await nats.jsm.consumers.info(stream, name)).num_ack_pending;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a message waiting in the buffer past its ack wait is not redelivered while its worker lives', async () => {
  const pull = await (await consumerOf('slow', 30)).open();
  const seen: JsMsg[] = [];
  for await (const m of pull.messages) {
    seen.push(m);
    m.ack();
    // The worker is then busy for twice the ack wait (a slow batch); the other messages wait in the buffer meanwhile.
    if (seen.length === 1) await sleep(2 * ackWaitMs);
    if (seen.length === 30) break;
  }
  pull.stop();
  expect(seen.map((m) => m.info.redeliveryCount)).toEqual(Array(30).fill(1));
  expect(seen.map((m) => m.seq).sort((a, b) => a - b)).toEqual(seen.map((m) => m.seq).sort((a, b) => a - b).filter((s, i, all) => all.indexOf(s) === i));
  expect((await nats.jsm.consumers.info(stream, 'slow')).num_redelivered).toBe(0);
});

test('a worker that reads nothing holds at most two pulls of messages', async () => {
  const pull = await (await consumerOf('idle', 100)).open();
  const iterator = pull.messages[Symbol.asyncIterator]();
  const first = await iterator.next();
  (first.value as JsMsg).ack();
  await sleep(1_000);
  expect(await pending('idle')).toBeLessThanOrEqual(20);
  expect(await pending('idle')).toBeGreaterThanOrEqual(10);
  pull.stop();
});

test('messages left in the buffer of a stopped pull are handed out again after their ack wait', async () => {
  const source = await consumerOf('stopped', 5);
  const pull = await source.open();
  const iterator = pull.messages[Symbol.asyncIterator]();
  (( await iterator.next()).value as JsMsg).ack();
  pull.stop();
  const again = await source.open();
  const redelivered: number[] = [];
  for await (const m of again.messages) {
    redelivered.push(m.info.redeliveryCount);
    m.ack();
    if (redelivered.length === 4) break;
  }
  again.stop();
  expect(redelivered).toEqual([2, 2, 2, 2]);
});

test('a message kept alive in the buffer for twice the ack wait is not taken for one another worker may hold, nor is one never pulled', async () => {
  const source = await consumerOf('held', 2);
  const pull = await source.open();
  const iterator = pull.messages[Symbol.asyncIterator]();
  const first = (await iterator.next()).value as JsMsg;
  await sleep(2 * ackWaitMs);
  const second = (await iterator.next()).value as JsMsg;
  expect([source.mayHaveLapsed(first), source.mayHaveLapsed(second), source.mayHaveLapsed({})]).toEqual([false, false, false]);
  first.ack();
  second.ack();
  pull.stop();
});

test('a message held while the process stalled past half the ack wait may have been handed to another worker; one pulled after may not', async () => {
  // A longer ack wait than the other tests': a stall is a keep-alive tick late by half of it, and
  // under CI's load a tick came 1.25 s late on its own (the 1.5 s wait's threshold) after `after` arrived.
  const stallAckWaitMs = 4_000;
  const source = await consumerOf('stalled', 1, stallAckWaitMs);
  const pull = await source.open();
  const iterator = pull.messages[Symbol.asyncIterator]();
  const before = (await iterator.next()).value as JsMsg;
  // The event loop blocked (a long synchronous step): no keep-alive leaves meanwhile.
  const until = Date.now() + stallAckWaitMs;
  while (Date.now() < until);
  await sleep(stallAckWaitMs / 2);
  expect(source.mayHaveLapsed(before)).toBe(true);
  await nats.js().publish(`${stream.toLowerCase()}.stalled`, Buffer.from('after'));
  const after = (await iterator.next()).value as JsMsg;
  expect(source.mayHaveLapsed(after)).toBe(false);
  before.ack();
  after.ack();
  pull.stop();
});
