/**
 * The tokens of the classification rule language (docs/enrichment.md,
 * "Classification rules"), each with the line and column (1-based) it
 * starts at, so that a parse error can name where the text went wrong.
 * Hand-written: no regular expression built from the rule text, no eval.
 */
export type TokenKind = 'ident' | 'string' | 'number' | 'capture' | 'symbol' | 'newline' | 'end';

export interface Token {
  kind: TokenKind;
  /** The token's text: a string's value without quotes or escapes, a symbol's characters. */
  text: string;
  line: number;
  column: number;
}

/** Where the rule text is wrong, and what was expected there. */
export class RuleSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly column: number,
    readonly expected: string,
    readonly found: string,
  ) {
    super(`${line}:${column}: expected ${expected}, found ${found}`);
    this.name = 'RuleSyntaxError';
  }
}

/** Symbols, longest first so that `<=` is not read as `<` then `=`. */
const symbols = ['->', '==', '!=', '<=', '>=', '<', '>', '(', ')', ',', ';', '.'];
const escapes: Record<string, string> = { '"': '"', '\\': '\\', n: '\n', t: '\t' };

/** The most text a rule set may have: rules are written by people, not generated. */
export const maxRuleTextLength = 64 * 1024;

const isIdentStart = (c: string) => /[A-Za-z_]/.test(c);
const isIdentPart = (c: string) => /[A-Za-z0-9_]/.test(c);
const isDigit = (c: string) => c >= '0' && c <= '9';

/** How a token, or the end, is named in an error. */
export function describe(token: Token): string {
  if (token.kind === 'end') return 'the end of the rules';
  if (token.kind === 'newline') return 'the end of the line';
  if (token.kind === 'string') return `the string ${JSON.stringify(token.text)}`;
  return `"${token.text}"`;
}

class Scanner {
  private i = 0;
  private line = 1;
  private column = 1;
  readonly tokens: Token[] = [];

  constructor(private readonly text: string) {}

  private peek(offset = 0): string {
    return this.text[this.i + offset] ?? '';
  }

  private advance(): string {
    const c = this.text[this.i++] ?? '';
    if (c === '\n') {
      this.line += 1;
      this.column = 1;
    } else {
      this.column += 1;
    }
    return c;
  }

  private push(kind: TokenKind, text: string, line: number, column: number): void {
    this.tokens.push({ kind, text, line, column });
  }

  run(): Token[] {
    while (this.i < this.text.length) this.next();
    this.push('end', '', this.line, this.column);
    return this.tokens;
  }

  private next(): void {
    const c = this.peek();
    const line = this.line;
    const column = this.column;
    if (c === '\n') {
      this.advance();
      this.push('newline', '\n', line, column);
    } else if (c === ' ' || c === '\t' || c === '\r') {
      this.advance();
    } else if (c === '#') {
      while (this.i < this.text.length && this.peek() !== '\n') this.advance();
    } else if (c === '"') {
      this.push('string', this.string(line, column), line, column);
    } else if (isDigit(c)) {
      this.push('number', this.run_(isDigit), line, column);
    } else if (c === '$' && isDigit(this.peek(1))) {
      this.advance();
      this.push('capture', this.run_(isDigit), line, column);
    } else if (isIdentStart(c)) {
      this.push('ident', this.run_(isIdentPart), line, column);
    } else {
      const symbol = symbols.find((s) => this.text.startsWith(s, this.i));
      if (!symbol) throw new RuleSyntaxError(line, column, 'a rule', `the character ${JSON.stringify(c)}`);
      for (let k = 0; k < symbol.length; k += 1) this.advance();
      this.push('symbol', symbol, line, column);
    }
  }

  private run_(part: (c: string) => boolean): string {
    const start = this.i;
    while (this.i < this.text.length && part(this.peek())) this.advance();
    return this.text.slice(start, this.i);
  }

  private string(line: number, column: number): string {
    this.advance();
    let value = '';
    for (;;) {
      const c = this.peek();
      if (c === '' || c === '\n') throw new RuleSyntaxError(line, column, 'a closing quote (")', 'the end of the line');
      this.advance();
      if (c === '"') return value;
      if (c !== '\\') {
        value += c;
        continue;
      }
      const escaped = escapes[this.peek()];
      if (escaped === undefined) throw new RuleSyntaxError(this.line, this.column, 'one of \\" \\\\ \\n \\t', JSON.stringify(this.peek()));
      this.advance();
      value += escaped;
    }
  }
}

/** The tokens of a rule text, ending with an `end` token; a character that starts no token is a RuleSyntaxError. */
export function tokenize(text: string): Token[] {
  if (text.length > maxRuleTextLength) throw new RuleSyntaxError(1, 1, `at most ${maxRuleTextLength} characters`, `${text.length}`);
  return new Scanner(text).run();
}
