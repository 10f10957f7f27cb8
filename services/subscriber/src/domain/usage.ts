// FieldUsageReport: sorting the usages other services report into the report's lists (pure).

export type UsageCategory =
  | 'FORM'
  | 'AUTOMATION'
  | 'SEGMENT'
  | 'PURCHASE_CONNECTION'
  | 'IMPORT'
  | 'SEND_FILTER'
  | 'CONTENT_MERGE_TAG'
  | 'SEND_IN_PROGRESS'
  | 'EXTERNAL_HINT'
  | 'UNSPECIFIED';
export type UsageEffect = 'BLOCKS_ARCHIVE' | 'WARNING' | 'CONTENT_MERGE_TAG' | 'EXTERNAL_HINT' | 'UNSPECIFIED';

export interface FieldUsage {
  category: UsageCategory;
  area: string;
  artifactId: string;
  artifactName: string;
  status: string;
  reason: string;
  link: string;
  permanentDeleteBlocking: boolean;
  effect: UsageEffect;
}

/** One asked service's answer: its usages, or why it did not answer. */
export type SourceAnswer = { service: string; answered: true; usages: FieldUsage[] } | { service: string; answered: false; error: string };

export interface UsageClassification {
  archiveBlocked: boolean;
  permanentDeleteBlocked: boolean;
  blockingUsages: FieldUsage[];
  warningUsages: FieldUsage[];
  contentMergeTagUsages: FieldUsage[];
  permanentDeleteBlockingUsages: FieldUsage[];
  externalHints: FieldUsage[];
  sources: Array<{ service: string; answered: boolean; error?: string }>;
  /** Services that did not answer: nothing can be proven about their usages. */
  unanswered: string[];
}

/**
 * Sorts usages by their effect: BLOCKS_ARCHIVE -> blockingUsages, WARNING -> warningUsages,
 * CONTENT_MERGE_TAG -> contentMergeTagUsages, EXTERNAL_HINT -> externalHints; any usage marked
 * permanentDeleteBlocking is also listed in permanentDeleteBlockingUsages. A usage without a known
 * effect is treated as blocking (a service that reports a usage it cannot classify must not let an
 * archive through). archiveBlocked / permanentDeleteBlocked are true when a list blocks or when a
 * source did not answer: an unanswered source can hide a blocking usage, so the report never says
 * "not blocked" without every source's word.
 */
export function classifyUsages(answers: readonly SourceAnswer[]): UsageClassification {
  const out: UsageClassification = {
    archiveBlocked: false,
    permanentDeleteBlocked: false,
    blockingUsages: [],
    warningUsages: [],
    contentMergeTagUsages: [],
    permanentDeleteBlockingUsages: [],
    externalHints: [],
    sources: [],
    unanswered: [],
  };
  for (const a of answers) {
    if (!a.answered) {
      out.sources.push({ service: a.service, answered: false, error: a.error });
      out.unanswered.push(a.service);
      continue;
    }
    out.sources.push({ service: a.service, answered: true });
    for (const u of a.usages) {
      switch (u.effect) {
        case 'WARNING':
          out.warningUsages.push(u);
          break;
        case 'CONTENT_MERGE_TAG':
          out.contentMergeTagUsages.push(u);
          break;
        case 'EXTERNAL_HINT':
          out.externalHints.push(u);
          break;
        default:
          out.blockingUsages.push(u);
      }
      if (u.permanentDeleteBlocking) out.permanentDeleteBlockingUsages.push(u);
    }
  }
  const unknown = out.unanswered.length > 0;
  out.archiveBlocked = unknown || out.blockingUsages.length > 0;
  out.permanentDeleteBlocked = unknown || out.permanentDeleteBlockingUsages.length > 0;
  return out;
}

/** Forms using a field (ListFieldForms): FORM usages as {id, name}, each form once. */
export function formsOf(usages: readonly FieldUsage[]): Array<{ id: string; name: string }> {
  const seen = new Map<string, string>();
  for (const u of usages) if (u.category === 'FORM' && !seen.has(u.artifactId)) seen.set(u.artifactId, u.artifactName);
  return [...seen].map(([id, name]) => ({ id, name }));
}

/** A usage as an error detail (field_archive_blocked / field_delete_blocked). */
export function usageProblem(u: FieldUsage, path: string): { path: string; problem: string } {
  return { path, problem: `${u.category} "${u.artifactName}" (${u.artifactId})${u.reason ? `: ${u.reason}` : ''}` };
}
