/**
 * Limits of the subscriber domain. The specification leaves sizes open ("not shown"); these are the
 * values this service enforces, every one of them answered with a precise errorId (never INTERNAL):
 *
 * | what                                   | limit                 | errorId when broken        |
 * |----------------------------------------|-----------------------|----------------------------|
 * | email (canonical)                      | <= 254 chars          | invalid_email              |
 * | firstName (trimmed)                    | <= 255 chars          | validation_failed          |
 * | field label (trimmed)                  | 1..255 chars          | validation_failed          |
 * | personalizationTagName                 | ^[a-z][a-z0-9_]{0,63}$| invalid_personalization_tag_name |
 * | TEXT value / LONG_TEXT value           | <= 10,000 / 100,000   | validation_failed          |
 * | EMAIL value                            | valid address, <= 254 | invalid_email              |
 * | NUMBER value                           | finite                | validation_failed          |
 * | DATE value                             | real date YYYY-MM-DD  | validation_failed          |
 * | MULTI_OPTION value                     | 1..500 option ids     | validation_failed          |
 * | options per field / option label      | 1..500 / 1..255 chars | validation_failed          |
 * | tag name (trimmed)                     | 1..100 chars          | validation_failed          |
 * | tag ids per request                    | <= 1,000              | validation_failed          |
 * | topic label / description              | 1..255 / <= 2,000     | validation_failed          |
 * | topic ids per request                  | <= 1,000              | validation_failed          |
 * | field values per request               | <= 1,000              | validation_failed          |
 * | subscriberIds per bulk tagging request | 1..10,000             | validation_failed          |
 * | rows per sync request                  | <= 1,000              | sync_too_many_rows         |
 * | emails per FindSubscribersByEmail      | 1..500                | validation_failed          |
 * | opt-out source                         | 1..100 chars          | validation_failed          |
 * | search (list filter)                   | <= 254 chars          | validation_failed          |
 * | page size                              | 1..1,000              | validation_failed          |
 */
export const LIMITS = {
  email: 254,
  firstName: 255,
  fieldLabel: 255,
  text: 10_000,
  longText: 100_000,
  optionsPerField: 500,
  optionLabel: 255,
  tagName: 100,
  tagsPerRequest: 1_000,
  topicLabel: 255,
  topicDescription: 2_000,
  topicsPerRequest: 1_000,
  fieldValuesPerRequest: 1_000,
  subscribersPerBulkRequest: 10_000,
  syncRows: 1_000,
  emailsPerLookup: 500,
  optOutSource: 100,
  search: 254,
  pageSize: 1_000,
} as const;
