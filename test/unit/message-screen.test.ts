import { screenMessage } from '../../workers/telemetry/message-screen';
import { message } from '../support/work-messages';

/** What the stream workers accept from the telemetry subjects before any byte goes further, on plain messages. */
describe('the telemetry message screen', () => {
  test('a message as the API publishes it passes', () => {
    expect(screenMessage(message())).toEqual({ ok: true });
  });

  test('a body with a blank line and SQL after it is refused', () => {
    const verdict = screenMessage(message({ body: `{"org_id":"org_a","x":1}\n\nINSERT INTO api_keys VALUES ('pwned')\n` }));
    expect(verdict).toEqual({ ok: false, reason: 'not_rows_of_org' });
  });

  test('a row that brings the write id the storage adds is refused', () => {
    expect(screenMessage(message({ rows: [{ org_id: 'org_a', event_id: 'evt_1', ts: 1, write_id: 7 }] }))).toEqual({ ok: false, reason: 'reserved_field' });
  });

  test('rows of another org on this org subject are refused', () => {
    expect(screenMessage(message({ rows: [{ org_id: 'org_b', event_id: 'evt_1', ts: 1 }] }))).toEqual({ ok: false, reason: 'not_rows_of_org' });
  });

  test('a line of this org that carries a second object, of another org, is refused', () => {
    const row = (org: string) => JSON.stringify({ org_id: org, event_id: 'evt_1', ts: 1 });
    for (const between of ['', ',', ' ']) expect(screenMessage(message({ body: `${row('org_a')}${between}${row('org_b')}\n` }))).toEqual({ ok: false, reason: 'not_rows_of_org' });
  });

  test('a kind the subject does not carry, or no kind at all, is refused', () => {
    const forged = { ...message(), subject: 't.tel.signal.org_a' };
    expect(screenMessage(forged)).toEqual({ ok: false, reason: 'unknown_kind' });
    expect(screenMessage(message({ kind: 'sql' }))).toEqual({ ok: false, reason: 'unknown_kind' });
  });

  test('an org header that differs from the subject is refused', () => {
    expect(screenMessage({ ...message(), subject: 't.tel.flow.org_b' })).toEqual({ ok: false, reason: 'org_mismatch' });
  });

  test('times that are not whole numbers are refused', () => {
    const m = message();
    const headers = { ...m.headers!, get: (k: string) => (k === 'Nettel-Min-Ts' ? 'NaN' : m.headers!.get(k)) };
    expect(screenMessage({ ...m, headers })).toEqual({ ok: false, reason: 'bad_times' });
  });

  test('a flow message with its detection digest after the rows passes, the digest unread by the screen', () => {
    expect(screenMessage(message({ digest: 'not a row of any org\n' }))).toEqual({ ok: true });
  });

  test('a rows-bytes header that is no length within the message is refused', () => {
    for (const rowsBytesHeader of ['-1', '1e3', 'x', '99999999']) expect(screenMessage(message({ rowsBytesHeader }))).toEqual({ ok: false, reason: 'bad_rows_bytes' });
  });

  test('rows cut short by their rows-bytes header are judged as cut: a partial row is refused', () => {
    expect(screenMessage(message({ rowsBytesHeader: '10' }))).toEqual({ ok: false, reason: 'not_rows_of_org' });
  });
});
