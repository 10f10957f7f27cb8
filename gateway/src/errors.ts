import { DomainError, fromServiceError, GrpcStatus, type Problem } from '@mailer/kit';
import type { Schemas } from './openapi/types';

export type { Problem };

/**
 * The body of every error response (the ErrorMessageDto schema). `errorId` is any text here: ids
 * answered by services pass through, and a test checks every id the gateway uses is catalogued.
 */
export type ErrorMessageDto = Omit<Schemas['ErrorMessageDto'], 'errorId'> & { errorId: string };

/**
 * An error the gateway answers with on purpose. Thrown from middleware and routes; the error
 * handler turns it into `status` + ErrorMessageDto (+ headers such as Retry-After or Allow).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorId: string,
    message: string,
    readonly details?: Problem[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toDto(): ErrorMessageDto {
    return this.details?.length
      ? { errorId: this.errorId, message: this.message, details: this.details }
      : { errorId: this.errorId, message: this.message };
  }
}

/**
 * Every errorId the gateway itself produces or passes through from a service, with its status.
 * The OpenAPI document publishes this list; tests check the gateway uses no id outside it.
 */
export const ERROR_CATALOGUE: ReadonlyArray<{ errorId: string; status: number; meaning: string }> = [
  { errorId: 'validation_failed', status: 400, meaning: 'The body, a query or path parameter does not satisfy the operation contract; `details` lists each problem.' },
  { errorId: 'malformed_json', status: 400, meaning: 'The body is not valid JSON, or not valid UTF-8.' },
  { errorId: 'json_too_deep', status: 400, meaning: 'The JSON body nests objects and arrays more than 32 levels deep (the top-level value is level 1).' },
  { errorId: 'unknown_property', status: 400, meaning: 'The body (or query) holds a property the operation does not define; `details` names it. Free-form values (`properties`, `_serviceExampleRequest`, ...) accept any members.' },
  { errorId: 'invalid_uuid', status: 400, meaning: 'A path parameter, query parameter or body member that must be a UUID is not one.' },
  { errorId: 'invalid_email', status: 400, meaning: 'An email address has invalid syntax.' },
  { errorId: 'api_key_in_url', status: 400, meaning: 'An API key was sent in the URL (apiKey, api_key, api-key, key, x-api-key query parameters, any case). Send it in the X-API-Key header; the key should be rotated since URLs end up in logs.' },
  { errorId: 'invalid_idempotency_key', status: 400, meaning: 'The Idempotency-Key header is not 1-255 printable ASCII characters.' },
  { errorId: 'malformed_request', status: 400, meaning: 'The request is not valid HTTP (framing, header syntax); the connection is closed.' },
  { errorId: 'duplicate_ids', status: 400, meaning: 'A list of ids (tags, topicIds, subscriberIds, optionIds, the fieldIds of `fields`, option ids of a field update) holds the same id twice.' },
  { errorId: 'subscriber_status_not_manual', status: 400, meaning: 'The requested subscriber status cannot be set manually (only ACTIVE, UNSUBSCRIBED and BLOCKED; UNCONFIRMED on create).' },
  { errorId: 'field_value_kind_mismatch', status: 400, meaning: 'A field value\'s `kind` does not match the field type (TEXT and LONG_TEXT take TEXT, SINGLE_CHOICE takes SINGLE_OPTION, ...).' },
  { errorId: 'option_inactive', status: 400, meaning: 'A selected option of a choice field is deactivated and cannot be chosen for a new value.' },
  { errorId: 'required_field_missing', status: 400, meaning: 'A required custom field has no value in a create or full replacement; `details` names each missing field.' },
  { errorId: 'field_options_required', status: 400, meaning: 'A SINGLE_CHOICE or MULTI_CHOICE field needs at least one (active) option.' },
  { errorId: 'field_options_not_allowed', status: 400, meaning: 'Options were given for a field type that has none.' },
  { errorId: 'invalid_personalization_tag_name', status: 400, meaning: 'A personalizationTagName does not match `^[a-z][a-z0-9_]{0,63}$`.' },
  { errorId: 'topic_inactive', status: 400, meaning: 'A topic to join (or to make the default) is not active.' },
  { errorId: 'sync_too_many_rows', status: 400, meaning: 'A sync request holds more than 1,000 rows.' },
  { errorId: 'duplicate_email_in_request', status: 400, meaning: 'Only as the errorId of a FAILED sync row (in a 200 response): an earlier row of the same request has this email address.' },
  { errorId: 'segment_expression_invalid', status: 400, meaning: 'A segment expression is not of the contract\'s shape (a member of the wrong type or vocabulary); `details` names each problem.' },
  { errorId: 'form_email_field_required', status: 400, meaning: 'A form\'s inputFields must hold the built-in EMAIL field with isRequired true.' },
  { errorId: 'form_required_field_missing', status: 400, meaning: 'A field the catalog marks required is not an input of the form, or not with isRequired true; `details` names each.' },
  { errorId: 'form_field_duplicate', status: 400, meaning: 'A form names the same field twice in inputFields.' },
  { errorId: 'form_field_internal', status: 400, meaning: 'An internal field (hidden from subscriber-facing forms) cannot be an input of a form.' },
  { errorId: 'form_input_control_invalid', status: 400, meaning: 'The inputControl does not fit the field type; the message lists those that do.' },
  { errorId: 'form_route_not_allowed', status: 400, meaning: '`routePath` and `domain` belong to PAGE forms only.' },
  { errorId: 'segment_legacy_filter_groups', status: 400, meaning: 'The expression carries the legacy member `filterGroups`; use `conditionGroups`.' },
  { errorId: 'segment_expression_empty', status: 400, meaning: 'A segment expression has no condition group, or a group has no condition.' },
  { errorId: 'segment_too_many_groups', status: 400, meaning: 'A segment expression has more than 20 condition groups.' },
  { errorId: 'segment_too_many_conditions', status: 400, meaning: 'A condition group has more than 50 conditions.' },
  { errorId: 'segment_too_many_option_ids', status: 400, meaning: 'An operand lists more than 1,000 ids.' },
  { errorId: 'segment_field_ref_not_allowed', status: 400, meaning: '`fieldRef` is missing on a FIELD condition, or set on a TAGS, TOPICS, SEGMENT or PURCHASES condition.' },
  { errorId: 'segment_field_not_found', status: 400, meaning: 'A condition names a field the account does not have (or an unknown built-in field).' },
  { errorId: 'segment_field_archived', status: 400, meaning: 'A new condition uses an archived field.' },
  { errorId: 'segment_operator_not_allowed', status: 400, meaning: 'The operator does not fit the condition\'s subject or the field\'s type.' },
  { errorId: 'segment_operand_mismatch', status: 400, meaning: 'The operand\'s kind does not fit the operator, or it carries members of another kind.' },
  { errorId: 'segment_operand_invalid', status: 400, meaning: 'The operand\'s value is invalid (blank text, a number of days out of range, a malformed date, no ids).' },
  { errorId: 'segment_option_not_found', status: 400, meaning: 'An option id is not an option of the condition\'s field.' },
  { errorId: 'segment_tag_not_found', status: 400, meaning: 'A TAGS condition names a tag the account does not have.' },
  { errorId: 'segment_topic_not_found', status: 400, meaning: 'A TOPICS condition names a topic the account does not have.' },
  { errorId: 'segment_cycle', status: 400, meaning: 'Segment references would form a cycle.' },
  { errorId: 'segment_purchase_operand_invalid', status: 400, meaning: 'A purchase condition is incomplete or inconsistent.' },
  { errorId: 'segment_purchase_source_not_found', status: 400, meaning: 'A purchase condition names a purchase source the account does not have.' },
  { errorId: 'segment_period_invalid', status: 400, meaning: 'A purchase period is invalid (days out of range, from after to, malformed dates).' },
  { errorId: 'purchase_source_invalid_time_zone', status: 400, meaning: 'A purchase source\'s timeZone is not an IANA time zone id (e.g. Europe/Berlin).' },
  { errorId: 'report_period_invalid', status: 400, meaning: 'A report period is invalid: a date that is not an existing YYYY-MM-DD date, fromDate after toDate, or an unknown interval; `details` names the member.' },
  { errorId: 'report_invalid_time_zone', status: 400, meaning: 'A report\'s timeZone is not an IANA time zone id (e.g. Europe/Berlin).' },
  { errorId: 'report_too_many_points', status: 400, meaning: 'A report period has more than 1,000 points (buckets) at its interval: shorten the period or choose a longer interval.' },
  { errorId: 'sender_domain_not_allowed', status: 400, meaning: 'The fromEmail\'s domain is not one the operator allows for sender profiles (setting MAIL_ALLOWED_FROM_DOMAINS).' },
  { errorId: 'template_syntax_error', status: 400, meaning: 'A Liquid part of the template (subject, html, text) does not parse, or uses a tag that is not available (include, render, layout, block); `details` gives the part as `path` and `line L, col C: ...` as `problem`.' },
  { errorId: 'template_name_immutable', status: 400, meaning: 'A PUT of an email template names another template: a template\'s name cannot change (create a new one).' },
  { errorId: 'reserved_substitution_key', status: 400, meaning: '`substitutionData` uses a name the system supplies (`subscriber`, `event`, `links`).' },
  { errorId: 'events_page_too_large', status: 400, meaning: 'The events of the requested page hold more properties (over 8 MiB of JSON) than one answer carries; ask for a smaller pageSize (the message suggests one).' },
  { errorId: 'automation_wait_duration_invalid', status: 400, meaning: 'A WAIT step\'s duration is not an ISO 8601 duration in weeks, days, hours, minutes and seconds, or lies outside PT1S .. P365D; `details` names the step.' },
  { errorId: 'automation_reference_not_found', status: 400, meaning: 'An automation step names an email template, topic, tag, custom field, option or segment the account does not have; `details` names each such member (e.g. `body.steps[2].tagIds[0]`).' },
  { errorId: 'automation_field_archived', status: 400, meaning: 'A SET_FIELD step of an automation names an archived field, which takes no new values.' },
  { errorId: 'unknown_webhook_event', status: 400, meaning: 'The webhook subscription names no webhook event: use `*` or a name of GET /webhook-events.' },
  { errorId: 'webhook_target_not_allowed', status: 400, meaning: 'The webhook target URL is not allowed: not https (unless the operator allows http), credentials in it, or a host (literal, or a name resolving only to such addresses) that is loopback, private, link-local, unique-local, multicast or metadata (unless the operator allows its range).' },
  { errorId: 'feed_not_allowed', status: 400, meaning: 'The feed URL is refused by the outbound guard (the rules of webhook targets: https, public addresses, unless the operator allows http or ranges), or a redirect led to such a URL.' },
  { errorId: 'rss_schedule_invalid', status: 400, meaning: 'The SCHEDULE newsletter\'s cron expression does not have exactly 5 fields, cron refuses one, its CRON_TZ names no IANA zone, or it never fires.' },
  { errorId: 'api_key_missing', status: 401, meaning: 'No X-API-Key header. `Authorization: Bearer` is not accepted.' },
  { errorId: 'api_key_invalid', status: 401, meaning: 'The X-API-Key value is blank, unknown, deleted, replaced by rotation, or the masked form. One text for all: the response does not tell which.' },
  { errorId: 'operation_not_allowed_for_api_key', status: 403, meaning: 'The operation is for the application only (key management) and cannot be called with an API key.' },
  { errorId: 'origin_not_allowed', status: 403, meaning: "Public form submissions: the browser's Origin is not among the form's allowedOrigins (nor its landing page's host); the preflight is refused too." },
  { errorId: 'route_not_found', status: 404, meaning: 'No operation exists at this path.' },
  { errorId: 'subscriber_not_found', status: 404, meaning: 'No subscriber with this id (or email address) exists in the account.' },
  { errorId: 'field_not_found', status: 404, meaning: 'No custom field with this id exists in the account.' },
  { errorId: 'option_not_found', status: 404, meaning: 'The option id is not an option of this field.' },
  { errorId: 'tag_not_found', status: 404, meaning: 'No tag with this id exists in the account.' },
  { errorId: 'topic_not_found', status: 404, meaning: 'No topic with this id exists in the account.' },
  { errorId: 'segment_not_found', status: 404, meaning: 'No segment with this id exists in the account (also when an expression references one).' },
  { errorId: 'purchase_source_not_found', status: 404, meaning: 'No purchase source with this id exists in the account.' },
  { errorId: 'sender_profile_not_found', status: 404, meaning: 'No sender profile with this id exists in the account (also when a template names one).' },
  { errorId: 'template_not_found', status: 404, meaning: 'No email template with this name exists in the account.' },
  { errorId: 'email_message_not_found', status: 404, meaning: 'No email message with this id exists in the account.' },
  { errorId: 'suppression_not_found', status: 404, meaning: 'The email address is not on the account\'s suppression list.' },
  { errorId: 'form_not_found', status: 404, meaning: 'No form with this id exists in the account.' },
  { errorId: 'form_inactive', status: 404, meaning: 'The form is INACTIVE: it accepts no submissions and cannot be embedded until it is activated.' },
  { errorId: 'webhook_subscription_not_found', status: 404, meaning: 'No webhook subscription with this id exists in the account.' },
  { errorId: 'webhook_delivery_not_found', status: 404, meaning: 'No delivery with this id exists for this webhook subscription.' },
  { errorId: 'automation_not_found', status: 404, meaning: 'No automation with this id exists in the account.' },
  { errorId: 'rss_newsletter_not_found', status: 404, meaning: 'No RSS newsletter with this id exists in the account.' },
  { errorId: 'rss_issue_not_found', status: 404, meaning: 'No issue with this id exists in this RSS newsletter.' },
  { errorId: 'broadcast_not_found', status: 404, meaning: 'No broadcast with this id exists in the account.' },
  { errorId: 'sending_domain_not_found', status: 404, meaning: 'The account has not added this sending domain.' },
  { errorId: 'method_not_allowed', status: 405, meaning: 'The path exists but not with this method; the Allow header lists the methods it has.' },
  { errorId: 'request_timeout', status: 408, meaning: 'The request headers were not received in time; the connection is closed.' },
  { errorId: 'subscriber_email_exists', status: 409, meaning: 'A subscriber with this email address already exists in the account.' },
  { errorId: 'personalization_tag_name_exists', status: 409, meaning: 'Another field of the account (built-ins included) has this personalizationTagName.' },
  { errorId: 'tag_name_exists', status: 409, meaning: 'Another tag of the account has this name (ignoring case).' },
  { errorId: 'field_archived', status: 409, meaning: 'The field is archived and takes no new values (nor can it become, or stay while activating, an input of a form).' },
  { errorId: 'field_archive_blocked', status: 409, meaning: 'Write usages of the field block archival; `details` lists them (see GET /fields/{fieldId}/usage).' },
  { errorId: 'field_not_archived', status: 409, meaning: 'Only archived fields can be deleted permanently.' },
  { errorId: 'field_delete_blocked', status: 409, meaning: 'Usages of the field block its permanent deletion; `details` lists them.' },
  { errorId: 'field_usage_unknown', status: 409, meaning: 'A service that may use the field did not answer, so archival or deletion cannot be proven safe; retry later.' },
  { errorId: 'built_in_field_immutable', status: 409, meaning: 'Built-in fields (EMAIL, FIRST_NAME) cannot be changed, archived or deleted.' },
  { errorId: 'topic_is_default', status: 409, meaning: 'The default topic cannot be deactivated, un-defaulted or deleted; make another topic the default first.' },
  { errorId: 'concurrent_modification', status: 409, meaning: 'The record was changed concurrently too often while this request applied; repeat the request.' },
  { errorId: 'segment_name_taken', status: 409, meaning: 'Another segment of the account has this name.' },
  { errorId: 'segment_in_use', status: 409, meaning: 'Another segment, an RSS newsletter, an automation step or a SCHEDULED or SENDING broadcast uses this segment; `details` names them.' },
  { errorId: 'topic_in_use', status: 409, meaning: 'An RSS newsletter, an automation step or a SCHEDULED or SENDING broadcast sends to this topic; `details` names them.' },
  { errorId: 'purchase_source_name_taken', status: 409, meaning: 'Another purchase source of the account has this name.' },
  { errorId: 'sender_profile_required', status: 409, meaning: 'The account has no sender profile, so no mail can be sent; create one first.' },
  { errorId: 'sender_profile_is_default', status: 409, meaning: 'The default sender profile cannot be un-defaulted (`isDefault: false`); make another profile the default instead.' },
  { errorId: 'sender_profile_in_use', status: 409, meaning: 'An email template, a form, an RSS newsletter or a SCHEDULED or SENDING broadcast names this sender profile; `details` lists them.' },
  { errorId: 'sender_domain_not_verified', status: 409, meaning: 'The installation requires verified domains and the sender profile\'s fromEmail domain is not a VERIFIED sending domain of the account (on create, update and send).' },
  { errorId: 'sending_domain_exists', status: 409, meaning: 'The account has already added this sending domain.' },
  { errorId: 'sending_domain_in_use', status: 409, meaning: 'A sender profile sends from this domain or a form serves its landing page on it; `details` lists them.' },
  { errorId: 'template_name_exists', status: 409, meaning: 'Another email template of the account has this name.' },
  { errorId: 'template_in_use', status: 409, meaning: 'An automation step, a form (as its confirmation mail) or a SCHEDULED or SENDING broadcast sends this template; `details` lists them.' },
  { errorId: 'broadcast_not_editable', status: 409, meaning: 'Only a DRAFT or SCHEDULED broadcast can be changed (PUT) or deleted.' },
  { errorId: 'broadcast_not_draft', status: 409, meaning: 'Only a DRAFT broadcast can be scheduled (a broadcast is sent once; FAILED and CANCELLED are final).' },
  { errorId: 'broadcast_not_cancellable', status: 409, meaning: 'Only a SCHEDULED or SENDING broadcast can be cancelled.' },
  { errorId: 'broadcast_not_sent', status: 409, meaning: 'Only a SENT broadcast can be resent to its non-openers.' },
  { errorId: 'route_path_taken', status: 409, meaning: 'Another form (of any account) already serves this routePath on this domain.' },
  { errorId: 'page_domain_not_verified', status: 409, meaning: 'The installation requires verified domains and the landing page\'s domain is not a VERIFIED sending domain of the account (on form create, update and publish).' },
  { errorId: 'form_not_publishable', status: 409, meaning: 'Only PAGE forms with a routePath have a landing page to publish.' },
  { errorId: 'landing_page_published', status: 409, meaning: 'The form\'s landing page is PUBLISHED: a PUT cannot change the type or remove the routePath; unpublish it first.' },
  { errorId: 'rss_newsletter_paused', status: 409, meaning: 'The RSS newsletter is paused: resume it to check its feed.' },
  { errorId: 'rss_newsletter_not_paused', status: 409, meaning: 'Only a paused RSS newsletter can be resumed.' },
  { errorId: 'rss_check_in_progress', status: 409, meaning: 'The feed of this RSS newsletter is being read right now (by the poller or another check); retry in a few seconds.' },
  { errorId: 'rss_issue_not_pending_review', status: 409, meaning: 'Only a PENDING_REVIEW or FAILED issue can be released or discarded.' },
  { errorId: 'idempotency_in_progress', status: 409, meaning: 'A request with this Idempotency-Key is still being processed; retry after Retry-After seconds.' },
  { errorId: 'payload_too_large', status: 413, meaning: 'The body is larger than 1 MiB (10 MiB for /subscribers/sync and /email-messages/batch).' },
  { errorId: 'unsupported_media_type', status: 415, meaning: 'A body was sent with a Content-Type other than application/json (or an unsupported charset or encoding).' },
  { errorId: 'idempotency_key_reused', status: 422, meaning: 'The Idempotency-Key was used within 24 h for a different request (method, path or body).' },
  { errorId: 'template_render_failed', status: 422, meaning: 'The template could not be rendered with these values: it passed a limit (render time, output size, memory) or a filter failed; the message says which. Nothing was sent.' },
  { errorId: 'feed_unreachable', status: 422, meaning: 'The feed could not be reached (DNS failure, refused or broken connection).' },
  { errorId: 'feed_timeout', status: 422, meaning: 'The feed did not answer within 10 s.' },
  { errorId: 'feed_too_large', status: 422, meaning: 'The feed is larger than 5 MB.' },
  { errorId: 'feed_too_many_redirects', status: 422, meaning: 'The feed URL redirected more than 3 times.' },
  { errorId: 'feed_http_error', status: 422, meaning: 'The feed URL answered an HTTP status other than 2xx (or 304 to a conditional read).' },
  { errorId: 'feed_unreadable', status: 422, meaning: 'The answer is not a feed in any of RSS 2.0, Atom, RDF or JSON Feed (broken XML or JSON included).' },
  { errorId: 'rate_limited', status: 429, meaning: 'A rate limit is reached; wait Retry-After seconds. Rejected requests do not consume budget.' },
  { errorId: 'headers_too_large', status: 431, meaning: 'The request headers are too large; the connection is closed.' },
  { errorId: 'internal_error', status: 500, meaning: 'The request could not be completed. No details are exposed; the X-Request-Id identifies it in the server logs.' },
  { errorId: 'segment_projection_lagging', status: 503, meaning: 'The segment service has not yet applied every subscriber change acknowledged before this request (bounded wait of 3 s); the answer would be stale, so none is given. Retry shortly.' },
  { errorId: 'event_backlog_full', status: 503, meaning: 'Too many domain events wait to be published (the message store is slow or down); nothing was written. Retry after a short wait.' },
  { errorId: 'segment_service_unavailable', status: 503, meaning: 'The segment service, which evaluates a segment for a subscriber list filtered by segment, did not answer. Retry later.' },
  { errorId: 'catalog_unavailable', status: 503, meaning: 'The subscriber service (fields, tags, topics that validate a segment expression) did not answer. Retry later.' },
  { errorId: 'service_unavailable', status: 503, meaning: 'A backing service or the message store is unavailable or timed out; the message names the service when one did not answer (never hosts or ports). Safe operations may be retried with backoff.' },
];

const CATALOGUE_STATUS = new Map(ERROR_CATALOGUE.map((e) => [e.errorId, e.status]));

const GRPC_TO_HTTP: Partial<Record<GrpcStatus, number>> = {
  [GrpcStatus.INVALID_ARGUMENT]: 400,
  [GrpcStatus.OUT_OF_RANGE]: 400,
  [GrpcStatus.NOT_FOUND]: 404,
  [GrpcStatus.ALREADY_EXISTS]: 409,
  [GrpcStatus.ABORTED]: 409,
  [GrpcStatus.FAILED_PRECONDITION]: 409,
  [GrpcStatus.PERMISSION_DENIED]: 403,
  [GrpcStatus.RESOURCE_EXHAUSTED]: 429,
  [GrpcStatus.UNAVAILABLE]: 503,
  [GrpcStatus.DEADLINE_EXCEEDED]: 503,
};

/** A shared store (JetStream KV or stream) could not be reached or answered too late. */
export class StoreUnavailable extends Error {
  constructor(readonly operation: string, cause: unknown) {
    super(`${operation}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'StoreUnavailable';
  }
}

export const serviceUnavailable = () =>
  new ApiError(503, 'service_unavailable', 'A backing service is unavailable. Retry later with backoff.');
export const internalError = () =>
  new ApiError(500, 'internal_error', 'The request could not be completed. Quote the X-Request-Id when reporting it.');

function isGrpcError(err: unknown): err is { code: number; details?: string; metadata?: never } {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'number' && 'metadata' in err;
}

/**
 * The one place where a gRPC failure becomes HTTP: a raw gRPC error, or the DomainError the service
 * clients already made of it (kit's peerClient: a service's own error, or PeerUnavailable with a
 * fixed text naming the service). A DomainError keeps its errorId and message for 4xx and 503;
 * anything else gets a generic text (a service's internal message, err.details, never leaks).
 */
export function fromGrpcError(err: unknown): ApiError | undefined {
  if (!(err instanceof DomainError) && !isGrpcError(err)) return undefined;
  const status = GRPC_TO_HTTP[err.code as GrpcStatus] ?? 500;
  const domain = err instanceof DomainError ? err : fromServiceError(err);
  // A 4xx errorId the catalogue gives another 4xx status keeps the catalogue's (gRPC has no code
  // for 422: template_render_failed travels as INVALID_ARGUMENT).
  const catalogued = domain && status >= 400 && status < 500 ? CATALOGUE_STATUS.get(domain.errorId) : undefined;
  if (domain && catalogued && catalogued >= 400 && catalogued < 500) return new ApiError(catalogued, domain.errorId, domain.message, domain.details);
  // A service may say why it is unavailable (e.g. event_backlog_full); its own texts are written
  // for clients. Any other 5xx gets a generic text (a service's internal message never leaks).
  if (status === 503) return domain ? new ApiError(503, domain.errorId, domain.message) : serviceUnavailable();
  if (status >= 500) return internalError();
  if (domain) return new ApiError(status, domain.errorId, domain.message, domain.details);
  // Services raise DomainErrors; a 4xx code without an errorId has no stable code to publish, so it is
  // treated as the bug it is (grpc-js's own local errors, e.g. message too large, land here too).
  return internalError();
}

/**
 * Maps anything thrown while handling a request to an ApiError: our own, gRPC, body-parser and
 * router errors (which carry `status` and `type`), and finally 500 for everything else.
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof StoreUnavailable) return serviceUnavailable();
  const grpc = fromGrpcError(err);
  if (grpc) return grpc;
  const e = err as { status?: unknown; statusCode?: unknown; type?: unknown };
  const status = typeof e?.status === 'number' ? e.status : typeof e?.statusCode === 'number' ? e.statusCode : 500;
  switch (e?.type) {
    case 'entity.parse.failed':
      return new ApiError(400, 'malformed_json', 'The request body is not valid JSON.');
    case 'entity.too.large':
      return new ApiError(413, 'payload_too_large', 'The request body is too large.');
    case 'encoding.unsupported':
      return new ApiError(415, 'unsupported_media_type', 'The Content-Encoding of the body is not supported.');
    case 'charset.unsupported':
      return new ApiError(415, 'unsupported_media_type', 'The charset of the body is not supported; send UTF-8 JSON.');
    case 'request.size.invalid':
    case 'request.aborted':
      return new ApiError(400, 'validation_failed', 'The request body was incomplete.');
  }
  if (status === 400) return new ApiError(400, 'validation_failed', 'The request could not be read (malformed path or header).');
  if (status === 413) return new ApiError(413, 'payload_too_large', 'The request body is too large.');
  if (status === 415) return new ApiError(415, 'unsupported_media_type', 'The request body has an unsupported media type.');
  return internalError();
}
