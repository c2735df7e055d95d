import { int, str, strList } from '../../storage/sql';

describe('sql literals', () => {
  test('a quote inside a string cannot end the literal', () => {
    expect(str("a'b")).toBe("'a\\'b'");
  });

  test('a trailing backslash cannot escape the closing quote', () => {
    expect(str('a\\')).toBe("'a\\\\'");
  });

  test('a NUL byte is escaped', () => {
    expect(str('a\0b')).toBe("'a\\0b'");
  });

  test('integers that are not safe integers are refused', () => {
    expect(() => int(1.5)).toThrow(TypeError);
    expect(() => int(Number.MAX_SAFE_INTEGER + 2)).toThrow(TypeError);
  });

  test('a list of strings quotes each one', () => {
    expect(strList(['a', "b'"])).toBe("('a', 'b\\'')");
  });
});
