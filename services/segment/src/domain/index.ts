/** The segment domain: pure logic, no I/O (expression types, validation, reference evaluator, compiler). */
export * from './expression';
export * from './operators';
export * from './contact';
export * from './evaluation-facts';
export { validateExpression, referencedSegmentIds, referencedFieldIds, SEGMENT_LIMITS } from './validate';
export type { SegmentErrorId, SegmentProblem, ValidationResult, ValidationCatalog, CatalogField, ValidateOptions } from './validate';
export { evaluate, evaluateCondition, and3, or3, not3 } from './evaluate';
export { compileSegment, compileCondition } from './compile';
export type { CompiledSegment, Filter } from './compile';
export { ENGAGEMENT_TYPES, foldEngagement } from './engagement';
export type { EngagementEvent, EngagementFacts, EngagementType } from './engagement';
