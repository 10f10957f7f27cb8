// The form service as the messaging service sees it: which forms name a sender profile or a
// confirmation template (asked before deleting one). When it does not answer, 503
// service_unavailable: a delete that cannot be proven safe is not done.
import { createClient, peerClient, type Logger } from '@mailer/kit';
import { formV1 } from '@mailer/proto';

export type FormReference = { senderProfileId: string } | { templateName: string };

export interface FormsUsing {
  /** How many of the account's forms name it, and up to 50 of them. */
  formsUsing(accountId: string, ref: FormReference): Promise<{ count: number; forms: Array<{ id: string; name: string }> }>;
  close(): void;
}

export function formsClient(address: string, logger?: Logger): FormsUsing {
  const client = peerClient(createClient(formV1.FormServiceClient, address, 2_000), {
    service: 'form',
    errorId: 'service_unavailable',
    message: 'The form service, which knows the forms naming this sender profile or template, is unavailable; retry later.',
    logger,
  });
  return {
    async formsUsing(accountId, ref) {
      const res = await client.countFormsUsing({
        accountId,
        ref: 'senderProfileId' in ref ? { $case: 'senderProfileId', value: ref.senderProfileId } : { $case: 'templateName', value: ref.templateName },
      });
      return { count: res.count, forms: res.forms };
    },
    close: () => client.close(),
  };
}
