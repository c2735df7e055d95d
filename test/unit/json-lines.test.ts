import { newWriteId } from '../../core/ids';
import { hasJsonLinesShape, rowPrefixOf, withLeadingField } from '../../core/json-lines';

const shape = (text: string, prefix?: string) => hasJsonLinesShape(Buffer.from(text), prefix);

describe('the JSONEachRow shape check', () => {
  test('rows of one JSON object per line, each ended by a newline, pass', () => {
    expect(shape('{"x":1}\n{"x":2}\n')).toBe(true);
  });

  test('a blank line, which chDB runs the text after as SQL, is refused', () => {
    expect(shape(`{"x":1}\n\nINSERT INTO secrets VALUES ('pwned')\n`)).toBe(false);
    expect(shape(`\n\nDROP TABLE flows\n`)).toBe(false);
  });

  test('a line of whitespace only, or a line that does not open with a brace, is refused', () => {
    expect(shape('{"x":1}\n \n{"x":2}\n')).toBe(false);
    expect(shape('{"x":1}\r\n\r\n{"x":2}\n')).toBe(false);
    expect(shape('{"x":1}\nDROP TABLE flows; {}\n')).toBe(false);
  });

  test('a last line without its newline, or an empty body, is refused', () => {
    expect(shape('{"x":1}')).toBe(false);
    expect(shape('')).toBe(false);
  });

  test('a line that does not close with a brace is refused', () => {
    expect(shape('{"x":1};\n')).toBe(false);
  });

  test('with an org prefix, every line must be a row of that org', () => {
    const prefix = rowPrefixOf('org_a');
    expect(shape('{"org_id":"org_a","x":1}\n{"org_id":"org_a","x":2}\n', prefix)).toBe(true);
    expect(shape('{"org_id":"org_a","x":1}\n{"org_id":"org_b","x":2}\n', prefix)).toBe(false);
    expect(shape('{"x":1,"org_id":"org_a"}\n', prefix)).toBe(false);
    // A longer org id that starts with the same letters is another org.
    expect(shape('{"org_id":"org_ab","x":1}\n', prefix)).toBe(false);
  });

  test('a view into a larger buffer is checked over its own bytes only', () => {
    const whole = Buffer.from('junk{"x":1}\njunk');
    expect(hasJsonLinesShape(new Uint8Array(whole.buffer, whole.byteOffset + 4, 8))).toBe(true);
  });
});

describe('a leading field added to every row', () => {
  test('each row gains the field first, and stays one JSON object per line', () => {
    const tagged = withLeadingField(Buffer.from('{"x":1}\n{"y":"{"}\n'), '"write_id":42').toString();
    expect(tagged).toBe('{"write_id":42,"x":1}\n{"write_id":42,"y":"{"}\n');
    expect(tagged.trimEnd().split('\n').map((l) => JSON.parse(l) as unknown)).toEqual([{ write_id: 42, x: 1 }, { write_id: 42, y: '{' }]);
  });

  test('rows that are a view into a larger buffer are tagged from their own bytes only', () => {
    const whole = Buffer.from('junk{"x":1}\n{"y":2}\njunk');
    const tagged = withLeadingField(whole.subarray(4, 20), '"write_id":9').toString();
    expect(tagged).toBe('{"write_id":9,"x":1}\n{"write_id":9,"y":2}\n');
  });

  test('the tagged rows keep the JSONEachRow shape', () => {
    expect(hasJsonLinesShape(withLeadingField(Buffer.from('{"a":[1,2]}\n'), '"write_id":7'))).toBe(true);
  });
});

describe('write ids', () => {
  test('a write id is a UInt64 in decimal whose high bits are its time in ms', () => {
    const id = newWriteId(1_790_000_000_000);
    expect(BigInt(id) >> 20n).toBe(1_790_000_000_000n);
    expect(BigInt(id) < 2n ** 64n).toBe(true);
  });

  test('two writes of the same millisecond get different ids', () => {
    const ids = new Set(Array.from({ length: 200 }, () => newWriteId(1_790_000_000_000)));
    expect(ids.size).toBeGreaterThan(195);
  });
});
