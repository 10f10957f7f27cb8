// Reading messages back (GET /email-messages, GET /email-messages/{messageId}).
import { notFound } from '@mailer/kit';
import { messagesOf, type EmailMessageDoc, type MessageCollections, type MessageQuery } from '../store/messages';

export interface ReadDeps {
  messages: MessageCollections;
}

export const emailMessageNotFound = (messageId: string) => notFound('email_message_not_found', `no email message with id ${messageId} exists in the account`);

export async function getEmailMessage(deps: ReadDeps, accountId: string, messageId: string): Promise<EmailMessageDoc> {
  const message = await messagesOf(deps.messages, accountId).get(messageId.toLowerCase());
  if (!message) throw emailMessageNotFound(messageId);
  return message;
}

/** One page, newest first; the address filter is canonicalised like the stored addresses. */
export async function listEmailMessages(deps: ReadDeps, accountId: string, query: MessageQuery): Promise<{ items: EmailMessageDoc[]; totalItems: number }> {
  const email = query.email === undefined ? undefined : query.email.trim().toLowerCase();
  return messagesOf(deps.messages, accountId).list({ ...query, email });
}
