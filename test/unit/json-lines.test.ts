import { hasJsonLinesShape, rowPrefixOf } from '../../core/json-lines';

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
