import type { Router } from 'express';
import type { ServiceClients } from '../clients';
import { formEmbeddingJson, formJson, formOverviewJson, formToProto } from '../mapping/forms';
import { listSubmissionsToProto, submissionPageJson } from '../mapping/submissions';
import { created, mount, noContent, ok, operation, type Operation } from './operation';

// Signup forms (form service): one operation per row of the API contract's "Forms" table.

type Transition = 'activateForm' | 'deactivateForm' | 'publishForm' | 'unpublishForm';

const transition = (path: string, operationId: Transition, rpc: Transition) =>
  operation('post', `/forms/:formId/${path}`, operationId, async ({ clients, accountId, params, call }) =>
    ok(formOverviewJson((await clients.forms[rpc]({ accountId, formId: params.formId }, call)).form)),
  );

export const formOperations: Operation[] = [
  operation('get', '/forms', 'listForms', async ({ clients, accountId, call }) =>
    ok({ items: (await clients.forms.listForms({ accountId }, call)).items.map(formOverviewJson) }),
  ),
  operation('post', '/forms', 'createForm', async ({ clients, accountId, body, call }) => {
    const form = formJson((await clients.forms.createForm({ accountId, form: formToProto(body) }, call)).form);
    return created(form, `/forms/${form.id}`);
  }),
  operation('get', '/forms/:formId', 'getForm', async ({ clients, accountId, params, call }) =>
    ok(formJson((await clients.forms.getForm({ accountId, formId: params.formId }, call)).form)),
  ),
  operation('put', '/forms/:formId', 'updateForm', async ({ clients, accountId, params, body, call }) =>
    ok(formJson((await clients.forms.updateForm({ accountId, formId: params.formId, form: formToProto(body) }, call)).form)),
  ),
  operation('delete', '/forms/:formId', 'deleteForm', async ({ clients, accountId, params, call }) => {
    await clients.forms.deleteForm({ accountId, formId: params.formId }, call);
    return noContent();
  }),
  transition('activate', 'activateForm', 'activateForm'),
  transition('deactivate', 'deactivateForm', 'deactivateForm'),
  transition('publish', 'publishForm', 'publishForm'),
  transition('unpublish', 'unpublishForm', 'unpublishForm'),
  operation('get', '/forms/:formId/embedding', 'getFormEmbedding', async ({ clients, accountId, params, call }) =>
    ok(formEmbeddingJson((await clients.forms.getFormEmbedding({ accountId, formId: params.formId }, call)).form)),
  ),
  operation('get', '/forms/:formId/submissions', 'listFormSubmissions', async ({ clients, accountId, params, query, call }) =>
    ok(submissionPageJson(await clients.submissions.listSubmissions(listSubmissionsToProto(accountId, params.formId, query), call))),
  ),
];

export const formRoutes = (clients: ServiceClients): Router => mount(formOperations, clients);
