import { suppressionParameters, suppressionPaths, suppressionSchemas, suppressionTags } from './suppressions';

/** The messaging domain of the OpenAPI document (more join as they are built). */
export const messagingDomainTags = [...suppressionTags];
export const messagingDomainPaths = { ...suppressionPaths };
export const messagingDomainParameters = { ...suppressionParameters };
export const messagingDomainSchemas = { ...suppressionSchemas };
