import {
  classifyExporter, classifyInterface, type ExporterAttributes, type ExporterClass, type InterfaceAttributes, type InterfaceClass,
} from '../../core/enrichment/classifier';
import { parseRules } from '../../core/enrichment/rule-parser';
import { RuleSyntaxError } from '../../core/enrichment/rule-tokens';
import type { Rule } from '../../core/enrichment/rules';
import { notFound, validationError } from '../../core/errors';
import type { ClassificationRulesRepo, VersionedClassification } from '../../storage/enrichment/classification-rules-repo';
import type { AuditLedger } from '../audit-ledger';
import type { WithLock } from '../exporter-service';
import { putNextVersion } from '../versioned-document';
import type { RulesInForce } from './interface-rows';

/** The rules of a text, or 400 naming the line, column and what was expected there. */
export function rulesOrRefusal(text: string): Rule[] {
  try {
    return parseRules(text);
  } catch (err) {
    if (!(err instanceof RuleSyntaxError)) throw err;
    throw validationError(`invalid classification rules: ${err.message}`, [
      { path: 'rules', message: `line ${err.line}, column ${err.column}: expected ${err.expected}, found ${err.found}` },
    ]);
  }
}

/** A sample to evaluate rules against: an exporter, and interfaces of it. */
export interface ClassificationSample {
  exporter: ExporterAttributes;
  interfaces: InterfaceAttributes[];
}

export interface ClassificationResult {
  exporter: ExporterClass;
  interfaces: Array<{ index: number; classification: InterfaceClass }>;
}

/** The rules in force per workspace, parsed once per version: what classification reads (the API and the SNMP poller). */
export class RulesInForceCache {
  private readonly parsed = new Map<string, RulesInForce>();

  constructor(private readonly repo: Pick<ClassificationRulesRepo, 'current'>) {}

  async inForce(orgId: string): Promise<RulesInForce> {
    const current = await this.repo.current(orgId);
    const kept = this.parsed.get(orgId);
    if (kept?.version === current.version) return kept;
    // Stored text was checked when it was written; a text that no longer parses (a stricter release) classifies nothing.
    let rules: Rule[] = [];
    try {
      rules = parseRules(current.rules);
    } catch {
      rules = [];
    }
    return this.remember(orgId, { version: current.version, rules });
  }

  remember(orgId: string, entry: RulesInForce): RulesInForce {
    this.parsed.set(orgId, entry);
    return entry;
  }
}

/**
 * A workspace's classification rules, a versioned document
 * (application/versioned-document.ts): every change is the next version,
 * audited as `classification_rules.update`; after a change, the interface
 * rows of the workspace are classified again (`onChange`).
 */
export class ClassificationService {
  constructor(
    private readonly deps: {
      repo: ClassificationRulesRepo;
      cache: RulesInForceCache;
      audit: AuditLedger;
      withLock: WithLock;
      onChange?: (orgId: string) => Promise<void>;
      now?: () => number;
    },
  ) {}

  get(orgId: string): Promise<VersionedClassification> {
    return this.deps.repo.current(orgId);
  }

  async version(orgId: string, version: number): Promise<VersionedClassification> {
    const found = await this.deps.repo.version(orgId, version);
    if (!found) throw notFound('classification rules version');
    return found;
  }

  async put(orgId: string, actor: string, text: string, startedFrom?: number): Promise<VersionedClassification> {
    const rules = rulesOrRefusal(text);
    const written = await putNextVersion(this.deps, { orgId, actor, startedFrom }, {
      name: 'the classification rules',
      lock: `classification-rules-${orgId}`,
      current: () => this.deps.repo.current(orgId),
      sameAs: (current) => current.rules === text,
      write: async (version) => {
        const next = { version, rules: text, created_at: (this.deps.now ?? Date.now)(), actor };
        await this.deps.repo.put(orgId, next);
        this.deps.cache.remember(orgId, { version, rules });
        return next;
      },
      audit: { action: 'classification_rules.update', details: () => ({ rules: text }) },
    });
    await this.deps.onChange?.(orgId);
    return written;
  }

  /** What the rules (the text given, or those in force) decide for a sample; nothing is stored. */
  async evaluate(orgId: string, text: string | undefined, sample: ClassificationSample): Promise<ClassificationResult> {
    const rules = text === undefined ? (await this.deps.cache.inForce(orgId)).rules : rulesOrRefusal(text);
    return {
      exporter: classifyExporter(rules, sample.exporter),
      interfaces: sample.interfaces.map((i) => ({ index: i.index, classification: classifyInterface(rules, sample.exporter, i) })),
    };
  }
}
