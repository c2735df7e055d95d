import { parseAddressRange, type AddressRange } from '../flow-query';
import { describe, RuleSyntaxError, tokenize, type Token } from './rule-tokens';
import {
  addressOperators, attributes, exporterFields, fieldValues, interfaceFields, maxRegexLength, maxRules, numberOperators,
  stringOperators, type Attribute, type ClassField, type Condition, type Decision, type DecisionValue, type Operand,
  type Operator, type Rule,
} from './rules';

/**
 * A recursive-descent parser of the classification rules (grammar in
 * docs/enrichment.md). One rule a line (or separated by `;`):
 *
 *   condition -> decision (, decision)*
 *   condition := or;  or := and ("or" and)*;  and := not ("and" not)*
 *   not := "not" not | "(" or ")" | "true" | Attribute operator operand
 *   decision := field value     value := word | "string" | $N | Attribute
 *
 * Every error is a RuleSyntaxError naming the line and column and what was
 * expected there.
 */
const fields: readonly ClassField[] = [...exporterFields, ...interfaceFields];
const operatorsOf = { string: stringOperators, number: numberOperators, address: addressOperators } as const;
const wordOperators = new Set(['startsWith', 'endsWith', 'contains', 'matches', 'in']);

class Parser {
  private i = 0;
  /** The capture groups of the `matches` comparisons in the rule being parsed. */
  private groups = 0;
  private readsInterface = false;

  constructor(private readonly tokens: Token[]) {}

  private get token(): Token {
    return this.tokens[this.i]!;
  }

  private fail(expected: string, token: Token = this.token): never {
    throw new RuleSyntaxError(token.line, token.column, expected, describe(token));
  }

  private isSymbol(text: string): boolean {
    return this.token.kind === 'symbol' && this.token.text === text;
  }

  private isWord(text: string): boolean {
    return this.token.kind === 'ident' && this.token.text === text;
  }

  private expectSymbol(text: string, expected = `"${text}"`): void {
    if (!this.isSymbol(text)) this.fail(expected);
    this.i += 1;
  }

  /** A method, not a narrowed property read: the parse moves on between two looks. */
  private atEnd(): boolean {
    return this.token.kind === 'end';
  }

  private skipSeparators(): void {
    while (this.token.kind === 'newline' || this.isSymbol(';')) this.i += 1;
  }

  rules(): Rule[] {
    const rules: Rule[] = [];
    this.skipSeparators();
    while (!this.atEnd()) {
      if (rules.length >= maxRules) this.fail(`at most ${maxRules} rules`);
      rules.push(this.rule());
      if (!this.atEnd() && this.token.kind !== 'newline' && !this.isSymbol(';')) this.fail('"," and another decision, or the end of the rule');
      this.skipSeparators();
    }
    return rules;
  }

  private rule(): Rule {
    const at = { line: this.token.line, column: this.token.column };
    this.groups = 0;
    this.readsInterface = false;
    const condition = this.or();
    this.expectSymbol('->', '"->" and the decisions, or "and", "or"');
    const decisions = [this.decision()];
    while (this.isSymbol(',')) {
      this.i += 1;
      decisions.push(this.decision());
    }
    return { condition, decisions, readsInterface: this.readsInterface, at };
  }

  private or(): Condition {
    let left = this.and();
    while (this.isWord('or')) {
      this.i += 1;
      left = { kind: 'or', left, right: this.and() };
    }
    return left;
  }

  private and(): Condition {
    let left = this.not();
    while (this.isWord('and')) {
      this.i += 1;
      left = { kind: 'and', left, right: this.not() };
    }
    return left;
  }

  private not(): Condition {
    if (this.isWord('not')) {
      this.i += 1;
      return { kind: 'not', operand: this.not() };
    }
    if (this.isSymbol('(')) {
      this.i += 1;
      const inner = this.or();
      this.expectSymbol(')', '")", "and" or "or"');
      return inner;
    }
    if (this.isWord('true')) {
      this.i += 1;
      return { kind: 'true' };
    }
    return this.comparison();
  }

  /** `Exporter.Name` or `Interface.Speed`: an object, a dot and one of its attributes. */
  private attribute(expected: string): Attribute {
    const start = this.token;
    if (start.kind !== 'ident' || (start.text !== 'Exporter' && start.text !== 'Interface')) this.fail(expected);
    this.i += 1;
    this.expectSymbol('.', `"." and an attribute of ${start.text}`);
    const name = `${start.text}.${this.token.kind === 'ident' ? this.token.text : ''}`;
    if (!(name in attributes)) {
      const known = Object.keys(attributes).filter((a) => a.startsWith(`${start.text}.`)).map((a) => a.split('.')[1]);
      this.fail(`an attribute of ${start.text} (${known.join(', ')})`);
    }
    this.i += 1;
    if (start.text === 'Interface') this.readsInterface = true;
    return name as Attribute;
  }

  private comparison(): Condition {
    const at = { line: this.token.line, column: this.token.column };
    const attribute = this.attribute('a condition (an attribute such as Interface.Description, "not", "(" or "true")');
    const kind = attributes[attribute];
    const allowed: readonly string[] = operatorsOf[kind];
    const op = this.token;
    const text = op.kind === 'symbol' || (op.kind === 'ident' && wordOperators.has(op.text)) ? op.text : '';
    if (!allowed.includes(text)) this.fail(`an operator for ${attribute} (${allowed.join(', ')})`);
    this.i += 1;
    const operator = text as Operator;
    return { kind: 'compare', attribute, operator, operand: this.operand(kind, operator), at };
  }

  private operand(kind: 'string' | 'number' | 'address', operator: Operator): Operand {
    if (operator === 'in') return this.list(kind);
    if (kind === 'number') return { kind: 'number', value: this.number() };
    const value = this.string('a string in double quotes');
    if (kind === 'address') return { kind: 'ranges', ranges: [this.range(value, -1)] };
    if (operator === 'matches') return this.regex(value);
    return { kind: 'string', value };
  }

  /** `in` takes a parenthesised list, or for addresses one CIDR prefix. */
  private list(kind: 'string' | 'number' | 'address'): Operand {
    if (kind === 'address' && this.token.kind === 'string') return { kind: 'ranges', ranges: [this.range(this.string(''), -1)] };
    this.expectSymbol('(', kind === 'address' ? 'a CIDR prefix in double quotes, or "(" and a list of them' : '"(" and a list of values');
    const items: Array<string | number | AddressRange> = [];
    do {
      if (items.length) this.i += 1;
      if (kind === 'number') items.push(this.number());
      else if (kind === 'string') items.push(this.string('a string in double quotes'));
      else items.push(this.range(this.string('a CIDR prefix in double quotes'), -1));
    } while (this.isSymbol(','));
    this.expectSymbol(')', '"," and another value, or ")"');
    if (kind === 'number') return { kind: 'numbers', values: items as number[] };
    if (kind === 'string') return { kind: 'strings', values: items as string[] };
    return { kind: 'ranges', ranges: items as AddressRange[] };
  }

  private number(): number {
    if (this.token.kind !== 'number' || this.token.text.length > 15) this.fail('a whole number');
    return Number(this.tokens[this.i++]!.text);
  }

  private string(expected: string): string {
    if (this.token.kind !== 'string') this.fail(expected);
    return this.tokens[this.i++]!.text;
  }

  /** `back`: how many tokens before the current one the prefix's string is, for the error's position. */
  private range(text: string, back: number): AddressRange {
    const range = parseAddressRange(text);
    if (!range) this.fail('an IPv4 or IPv6 address or CIDR prefix', this.tokens[this.i + back]);
    return range;
  }

  private regex(source: string): Operand {
    const token = this.tokens[this.i - 1]!;
    if (source.length > maxRegexLength) this.fail(`a regular expression of at most ${maxRegexLength} characters`, token);
    let groups = 0;
    try {
      // An alternative that matches the empty string counts the groups without running the pattern on any input.
      groups = (new RegExp(`${source}|`, 'u').exec('')?.length ?? 1) - 1;
    } catch (err) {
      this.fail(`a valid regular expression (${(err as Error).message})`, token);
    }
    this.groups = Math.max(this.groups, groups);
    return { kind: 'regex', source, groups };
  }

  private decision(): Decision {
    const token = this.token;
    if (token.kind !== 'ident' || !fields.includes(token.text as ClassField)) this.fail(`a field to set (${fields.join(', ')})`);
    const field = token.text as ClassField;
    if (this.readsInterface && (exporterFields as readonly string[]).includes(field)) {
      this.fail(`a field of an interface (${interfaceFields.join(', ')}): a rule that reads Interface cannot set the exporter's ${field}`);
    }
    this.i += 1;
    return { field, value: this.decisionValue(field) };
  }

  private decisionValue(field: ClassField): DecisionValue {
    const token = this.token;
    const fixed = fieldValues[field];
    if (fixed) {
      const text = token.kind === 'ident' || token.kind === 'string' ? token.text : '';
      if (!fixed.includes(text)) this.fail(`a ${field} (${fixed.join(', ')})`);
      this.i += 1;
      return { kind: 'literal', value: text };
    }
    if (token.kind === 'capture') {
      const group = Number(token.text);
      if (group < 1 || group > this.groups) this.fail(this.groups ? `a group from $1 to $${this.groups} of the rule's "matches"` : 'a value ($N needs a "matches" with groups in the condition)');
      this.i += 1;
      return { kind: 'capture', group };
    }
    if (this.isWord('Exporter') || this.isWord('Interface')) return { kind: 'attribute', attribute: this.attribute('an attribute') };
    if (token.kind === 'ident' || token.kind === 'string') {
      this.i += 1;
      return { kind: 'literal', value: token.text };
    }
    return this.fail(`a value for ${field} (a word, a string, $N or an attribute)`);
  }
}

/** The rules of a text, in order; a RuleSyntaxError names the first position that is wrong. */
export function parseRules(text: string): Rule[] {
  return new Parser(tokenize(text)).rules();
}
