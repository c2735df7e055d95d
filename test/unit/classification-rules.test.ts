import { classifyExporter, classifyInterface, type ExporterAttributes, type InterfaceAttributes } from '../../core/enrichment/classifier';
import { parseRules } from '../../core/enrichment/rule-parser';
import { RuleSyntaxError } from '../../core/enrichment/rule-tokens';

const edge: ExporterAttributes = { name: 'edge1.par', address: '192.0.2.1' };
const transit: InterfaceAttributes = { index: 3, name: 'et-0/0/3', description: 'Transit: Cogent 174', speed: 100_000 };
const customer: InterfaceAttributes = { index: 7, name: 'xe-1/0/7', description: 'Cust: ACME', speed: 10_000 };

const iface = (rules: string, i: InterfaceAttributes = transit, e: ExporterAttributes = edge) => classifyInterface(parseRules(rules), e, i);
const syntaxError = (text: string): RuleSyntaxError => {
  try {
    parseRules(text);
  } catch (err) {
    if (err instanceof RuleSyntaxError) return err;
    throw err;
  }
  throw new Error('the rules parsed');
};

describe('classification rule operators', () => {
  it.each([
    ['Interface.Description == "Transit: Cogent 174"', true],
    ['Interface.Description != "Transit: Cogent 174"', false],
    ['Interface.Description startsWith "Transit:"', true],
    ['Interface.Description endsWith "174"', true],
    ['Interface.Description contains "Cogent"', true],
    ['Interface.Description matches "^Transit: [A-Za-z]+"', true],
    ['Interface.Name in ("et-0/0/3", "et-0/0/4")', true],
    ['Interface.Speed == 100000', true],
    ['Interface.Speed != 100000', false],
    ['Interface.Speed < 100000', false],
    ['Interface.Speed <= 100000', true],
    ['Interface.Speed > 40000', true],
    ['Interface.Speed >= 100001', false],
    ['Interface.Index in (1, 2, 3)', true],
    ['Exporter.Name startsWith "edge"', true],
    ['Exporter.Address in "192.0.2.0/24"', true],
    ['Exporter.Address in ("10.0.0.0/8", "2001:db8::/32")', false],
    ['Exporter.Address == "192.0.2.1"', true],
    ['Exporter.Address != "192.0.2.1"', false],
    ['not Interface.Speed < 1000', true],
    ['Interface.Speed < 1000 or Exporter.Name contains "par"', true],
    ['Interface.Speed > 1000 and Exporter.Name contains "lon"', false],
    ['(Interface.Speed < 1000 or true) and not (Exporter.Name == "x")', true],
    ['true', true],
  ])('the condition %s holds: %s', (condition, expected) => {
    expect(iface(`${condition} -> boundary external`).boundary === 'external').toBe(expected);
  });

  it('gives a provider from the group a matches captured', () => {
    expect(iface('Interface.Description matches "^Transit: (\\\\S+)" -> boundary external, connectivity transit, provider $1')).toEqual({
      boundary: 'external', connectivity: 'transit', provider: 'Cogent',
    });
  });

  it('gives a field the value of an attribute', () => {
    expect(iface('true -> provider Interface.Name')).toEqual({ provider: 'et-0/0/3' });
  });

  it('keeps the first decision for each field and lets later rules decide the others', () => {
    const rules = [
      '# transit first',
      'Interface.Description startsWith "Transit:" -> connectivity transit',
      'true -> connectivity customer, boundary internal',
      'true -> boundary external',
    ].join('\n');
    expect(iface(rules)).toEqual({ connectivity: 'transit', boundary: 'internal' });
    expect(iface(rules, customer)).toEqual({ connectivity: 'customer', boundary: 'internal' });
  });

  it('classifies an exporter by the rules that read only the exporter', () => {
    const rules = parseRules('Exporter.Name matches "^([a-z]+)[0-9]+\\\\.([a-z]+)$" -> group $1, site $2, role "edge router"; Interface.Speed > 0 -> boundary external');
    expect(classifyExporter(rules, edge)).toEqual({ group: 'edge', site: 'par', role: 'edge router' });
  });

  it('leaves a field undecided when its captured group is empty', () => {
    expect(iface('Interface.Description matches "^Transit:( X)?" -> provider $1, boundary external')).toEqual({ boundary: 'external' });
  });

  it('reads rules separated by semicolons and blank lines with comments', () => {
    expect(parseRules('\n# none\ntrue -> site a; true -> region b # trailing\n\n')).toHaveLength(2);
  });
});

describe('bad rule text', () => {
  it.each([
    ['Interface.Descr == "x" -> boundary external', 1, 11, 'an attribute of Interface'],
    ['Interface.Description ~ "x" -> boundary external', 1, 23, 'a rule'],
    ['Interface.Speed startsWith "1" -> boundary external', 1, 17, 'an operator for Interface.Speed'],
    ['true -> boundary outside', 1, 18, 'a boundary (external, internal)'],
    ['true -> connectivity "peer"', 1, 22, 'a connectivity (transit, peering, pni, ix, customer)'],
    ['true -> colour red', 1, 9, 'a field to set'],
    ['true\n-> site a', 1, 5, '"->"'],
    ['true -> site a\nInterface.Name == "x" -> role core', 2, 26, 'a field of an interface'],
    ['Interface.Name matches "(" -> provider $1', 1, 24, 'a valid regular expression'],
    ['Interface.Name matches "a" -> provider $1', 1, 40, '$N needs a "matches" with groups'],
    ['Interface.Name == "unterminated -> site a', 1, 19, 'a closing quote'],
    ['Exporter.Address in "10.0.0.0/33" -> site a', 1, 21, 'an IPv4 or IPv6 address or CIDR prefix'],
    ['(true -> site a', 1, 7, '")"'],
    ['true -> site a b', 1, 16, '"," and another decision'],
    ['Interface.Index in (1, "2") -> site a', 1, 24, 'a whole number'],
  ])('%j is refused at %i:%i', (text, line, column, expected) => {
    const err = syntaxError(text);
    expect({ line: err.line, column: err.column }).toEqual({ line, column });
    expect(err.expected).toContain(expected);
    expect(err.message).toMatch(new RegExp(`^${line}:${column}: expected `));
  });

  it('names the character no token starts with', () => {
    expect(syntaxError('Interface.Description ~ "x" -> site a').found).toBe('the character "~"');
  });
});
