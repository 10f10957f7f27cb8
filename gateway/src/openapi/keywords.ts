// Extensions of the OpenAPI document that request validation reads (validator.ts).

/** Schema extension naming the errorId a failing keyword of that schema answers, e.g. `{maxItems: "sync_too_many_rows"}`. */
export const ERROR_IDS_KEYWORD = 'x-error-ids';
/** requestBody extension: the array member whose items are validated one by one (sync rows). */
export const PER_ITEM_KEYWORD = 'x-validated-per-item';
