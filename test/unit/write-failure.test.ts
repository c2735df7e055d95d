import { classifyWriteFailure } from '../../core/write-failure';

/**
 * Whether a failed ClickHouse write can succeed later, judged on what the
 * error says (its ClickHouse code, system code or name), on plain data.
 */
describe('write failure classification', () => {
  test.each([
    [241, 'memory_limit'],
    [252, 'too_many_parts'],
    [159, 'timeout'],
    [209, 'timeout'],
    [210, 'network'],
    [164, 'read_only'],
    [242, 'read_only'],
    [243, 'disk'],
  ])('ClickHouse code %i is a transient failure (%s)', (code, reason) => {
    expect(classifyWriteFailure({ clickhouseCode: code })).toEqual({ class: 'transient', reason });
  });

  test.each([
    [62, 'syntax'],
    [53, 'type'],
    [27, 'parse'],
    [117, 'parse'],
    [16, 'unknown_column'],
    [6, 'parse'],
  ])('ClickHouse code %i is a permanent refusal of the rows (%s)', (code, reason) => {
    expect(classifyWriteFailure({ clickhouseCode: code })).toEqual({ class: 'permanent', reason });
  });

  test('a missing table or database is transient: nothing is wrong with the rows, the schema is the operator\'s to fix', () => {
    expect(classifyWriteFailure({ clickhouseCode: 60 }).class).toBe('transient');
    expect(classifyWriteFailure({ clickhouseCode: 81 }).class).toBe('transient');
  });

  test('refused credentials are transient until the operator fixes them', () => {
    expect(classifyWriteFailure({ clickhouseCode: 516 })).toEqual({ class: 'transient', reason: 'access' });
  });

  test('a ClickHouse code the list does not know is unknown', () => {
    expect(classifyWriteFailure({ clickhouseCode: 4242 })).toEqual({ class: 'unknown', reason: 'unknown_code' });
  });

  test.each([
    ['ECONNREFUSED', 'network'],
    ['ECONNRESET', 'network'],
    ['EPIPE', 'network'],
    ['ETIMEDOUT', 'timeout'],
  ])('a connection that failed with %s is a transient failure (%s)', (systemCode, reason) => {
    expect(classifyWriteFailure({ systemCode })).toEqual({ class: 'transient', reason });
  });

  test('the ClickHouse code decides over a system code', () => {
    expect(classifyWriteFailure({ clickhouseCode: 27, systemCode: 'ECONNRESET' }).class).toBe('permanent');
  });

  test('an error with neither a ClickHouse code nor a known system code is transient', () => {
    expect(classifyWriteFailure({ name: 'TypeError' })).toEqual({ class: 'transient', reason: 'no_code' });
    expect(classifyWriteFailure({ systemCode: 'EWHATEVER' })).toEqual({ class: 'transient', reason: 'no_code' });
  });

  test('a written batch whose copy to the rate detectors failed is retried, never dead-lettered', () => {
    expect(classifyWriteFailure({ name: 'DetectionFeedError' })).toEqual({ class: 'transient', reason: 'detection_feed' });
  });

  test('a message body that is not NDJSON is a permanent refusal', () => {
    expect(classifyWriteFailure({ name: 'UnreadableMessageError' })).toEqual({ class: 'permanent', reason: 'unreadable' });
  });
});
