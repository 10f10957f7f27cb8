// The not-found answers of the use cases: one errorId and message per resource, written once.
import { notFound } from '@mailer/kit';

export const subscriberNotFound = (id: string) => notFound('subscriber_not_found', `subscriber ${id} does not exist`);
export const fieldNotFound = (id: string) => notFound('field_not_found', `field ${id} does not exist`);
export const tagNotFound = (id: string) => notFound('tag_not_found', `tag ${id} does not exist`);
export const topicNotFound = (id: string) => notFound('topic_not_found', `topic ${id} does not exist`);
