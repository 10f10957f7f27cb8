// @mailer/outbound: the one guard every fetch of a customer-given URL goes through (webhooks, RSS).
// the API contract "Webhooks" (target rules) and section 4 (OUTBOUND_ALLOW_HTTP, OUTBOUND_ALLOWED_CIDRS);
// docs/architecture.md "Outbound calls to customer-given URLs".
export { OutboundError, isOutboundError, type OutboundErrorCode } from './errors';
export { outboundSettings, addressPolicy, parseCidr, type OutboundSettings, type AddressPolicy } from './policy';
export { checkUrl, checkTarget, type CheckUrlResult, type CheckTargetResult, type Lookup } from './url';
export { createOutbound, type Outbound, type OutboundOptions, type OutboundRequest, type OutboundResponse } from './client';
export { outboundConfig, outboundSettingsOf } from './config';
